//! Making a pane: starting its process in a keeper (new, or again for a
//! pane whose process is gone), or taking it back from the keeper that
//! survived a host restart; and how its runtime behaves.

use super::cgroups;
use super::durable::DurableRecord;
use super::end_marker::EndMarker;
use super::input_line::InputLine;
use super::keeper::{self};
use super::news::NewsOutlet;
use super::output::PaneOutput;
use super::output_tap::OutputTaps;
use super::progress::{Progress, ProgressCell};
use super::ring::OutputRing;
use super::screen::TerminalScreen;
use super::session_capture::SessionCapture;
use super::terminal_model::TerminalModel;
use super::turn::{TerminalNotice, TurnTracker};
use super::{
    exit, launch_files, quiet_watch, reader, recorder, screen_follower, Launch, Pane, PaneInfo, PaneLimits,
    PaneServices,
};
use crate::control_group;
use crate::limits::{MAX_REOPENED_RING_BYTES, RESERVE_STEP};
use crate::store::records::{PaneRecord, RecordStore, RecordedScreen, RECORD_VERSION};
use panehost_adapters::completion::HookInjection;
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::reference_pattern::ReferencePattern;
use panehost_adapters::{CompletionSignal, LaunchPlan};
use panehost_ipc::pane::restored_by;
use panehost_ipc::{PaneId, ResumeRequest, ScreenSnapshot, Size, StartParams};
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tokio::io::unix::AsyncFd;

impl Pane {
    /// Starts a new pane `id`: the launch's process in a new PTY held by a
    /// keeper process, and the pane's tasks. Must be called within a tokio
    /// runtime.
    ///
    /// # Errors
    /// Fails when the keeper, the PTY or the process cannot be created.
    pub async fn start(id: PaneId, launch: Launch, services: PaneServices<'_>) -> io::Result<Arc<Pane>> {
        Pane::spawn(id, launch, services, None).await
    }

    /// Starts a new process for the pane `previous` records (whose process
    /// is gone), as `how` says it resumes: same id and creation time, the
    /// next generation, offsets continuing from the reservation.
    ///
    /// # Errors
    /// Fails when the keeper, the PTY or the process cannot be created.
    pub async fn relaunch(
        previous: PaneRecord,
        how: &'static str,
        launch: Launch,
        services: PaneServices<'_>,
    ) -> io::Result<Arc<Pane>> {
        Pane::spawn(previous.id.clone(), launch, services, Some((previous, how))).await
    }

    async fn spawn(
        id: PaneId,
        launch: Launch,
        services: PaneServices<'_>,
        previous: Option<(PaneRecord, &'static str)>,
    ) -> io::Result<Arc<Pane>> {
        let Launch { plan, start, size } = launch;
        let PaneServices { keepers, records, limits: pane_limits } = services;
        let notify_token = random_token()?;
        let extra_env = vec![
            ("PANEHOST_PANE".to_owned(), id.0.clone()),
            ("PANEHOST_NOTIFY_TOKEN".to_owned(), notify_token.clone()),
        ];
        let socket = keepers.sockets_dir().join(format!("{id}.sock"));
        // A pane restored by a new process keeps its id and creation time;
        // its generation grows and its offsets continue.
        let (generation, created_at_ms, reserved_offset, native_reference, restored_by) = match &previous {
            Some((prev, how)) => {
                (prev.generation + 1, prev.created_at_ms, prev.reserved_offset, prev.native_reference.clone(), *how)
            }
            // Resuming an exact session: that is the pane's session.
            None => {
                let resumed = match &start.resume {
                    Some(ResumeRequest::Reference(reference)) => Some(reference.clone()),
                    _ => None,
                };
                (1, now_ms(), 0, resumed, restored_by::STARTED)
            }
        };
        // Before the process exists: what it writes to its session store
        // comes after this.
        let behaviour = Behaviour { process_started: Some(SystemTime::now()), ..Behaviour::of(&plan) };
        let process = NewProcess {
            id: id.clone(),
            runtime: plan.runtime.clone(),
            start,
            cwd: plan.cwd.display().to_string(),
            size,
            keeper_socket: socket.clone(),
            notify_token,
            generation,
            created_at_ms,
            reserved_offset,
            native_reference,
            restored_by,
        };
        let keepers = Arc::clone(keepers);
        let hand_over = move || {
            launch_files::write(&plan.files)?;
            let cgroup = keepers.make_cgroup(&id, generation);
            let launch = || {
                keepers
                    .launch(&plan, size, &extra_env, &socket, cgroup.as_deref())
                    .and_then(|()| keeper::connect(&socket))
            };
            let mut handover = launch();
            if handover.as_ref().is_err_and(|error| {
                matches!(error.kind(), std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound)
            }) {
                // The keeper answered that the process runs, then nothing
                // listened on the pane's socket: it died in between (its
                // process with it, the terminal hung up). Once more, with
                // the keeper that replaces it.
                tracing::warn!(pane = %id, "the keeper died while it started the pane; starting it again");
                handover = launch();
            }
            let handover = match handover {
                Ok(handover) => handover,
                Err(error) => {
                    if let Some(dir) = &cgroup {
                        cgroups::remove(dir);
                    }
                    return Err(error);
                }
            };
            // The pane's group, if its process is in it (a keeper that
            // could not enter it started the process in its own).
            let cgroup = cgroup.filter(|dir| {
                let placed = handover.exited.is_some() || control_group::dir_of(handover.pid).as_ref() == Some(dir);
                if !placed {
                    cgroups::remove(dir);
                }
                placed
            });
            Ok(HandedOver { handover, cgroup })
        };
        Pane::over_handover(process, behaviour, records, pane_limits, hand_over).await
    }

    /// Builds the pane of a new process over what `hand_over` gives: the
    /// process's PTY, pid and keeper connection ([`keeper::Handover`],
    /// checked by [`keeper::Handover::new`]) and its control group. The
    /// keeper seam: a start has a keeper start the process and connects to
    /// it there ([`Pane::start`], [`Pane::relaunch`]); a test hands over a
    /// PTY and a socket pair it made itself, and gets the pane the host
    /// would have made. Everything else, the record, the ring, the screen
    /// and the pane's tasks, is the same.
    ///
    /// `hand_over` runs first, off the async workers, in the one trip
    /// there that all of a start's blocking work makes; then the pane's
    /// ring and end marker are made, and its first record is written
    /// (without waiting for the disk). Must be called within a tokio
    /// runtime.
    ///
    /// # Errors
    /// `hand_over`'s error, or the ring's when it cannot be made.
    pub(crate) async fn over_handover(
        process: NewProcess,
        behaviour: Behaviour,
        records: &RecordStore,
        pane_limits: PaneLimits,
        hand_over: impl FnOnce() -> io::Result<HandedOver> + Send + 'static,
    ) -> io::Result<Arc<Pane>> {
        let restored_by = process.restored_by;
        let store = records.clone();
        let ring_bytes = pane_limits.ring_bytes;
        // One trip off the async workers for all of a start's blocking
        // work: each trip there and back costs a wake-up of another thread.
        let (handover, beginning) = crate::blocking::run(move || {
            let HandedOver { handover, cgroup } = hand_over()?;
            let record = process.record(handover.pid);
            // A new process: its offsets continue from the reservation (a
            // new generation, whose offsets no client compares with the
            // old ones), in a new ring.
            let ring = OutputRing::create(Some(&store.ring_path(&record.id)), ring_bytes, record.reserved_offset)?;
            let mut beginning = Beginning::new(record, ring, &store);
            beginning.cgroup = cgroup;
            // A host that restarts finds the pane from here on; the disk
            // has it a moment later (a start does not wait for it: a
            // machine that loses power in between comes back without the
            // pane, never with a wrong one).
            if let Err(err) = store.save_unsynced(&beginning.record) {
                tracing::warn!(pane = %beginning.record.id, %err, "cannot write the pane record");
            }
            Ok::<_, io::Error>((handover, beginning))
        })
        .await?;
        let records = records.clone();
        Pane::assemble(beginning, behaviour, handover, pane_limits, records, restored_by, FirstRecord::Written).await
    }

    /// Takes back a pane whose keeper survived a host restart: same id,
    /// generation and pid; the ring the last host left, with every byte it
    /// had read at its offset, so offsets continue exactly where they ended
    /// (without that ring: from the exact end its end marker holds when
    /// the pane was quiet, else from the record's reservation); the screen
    /// starts from the recorded one, brought up to the end through what
    /// the ring holds after it, and a turn open in the record is open
    /// again.
    ///
    /// # Errors
    /// Fails when the keeper does not answer.
    pub async fn adopt(record: PaneRecord, behaviour: Behaviour, services: PaneServices<'_>) -> io::Result<Arc<Pane>> {
        let PaneServices { records, limits: pane_limits, keepers } = services;
        let keepers = Arc::clone(keepers);
        let store = records.clone();
        let ring_bytes = pane_limits.ring_bytes;
        let (handover, beginning) = crate::blocking::run(move || {
            let handover = keeper::connect(&record.keeper_socket)?;
            if handover.pid != record.pid {
                return Err(io::Error::other(format!(
                    "the keeper holds pid {}, the record names {}",
                    handover.pid, record.pid
                )));
            }
            let ring_path = store.ring_path(&record.id);
            let ring = match OutputRing::reopen(&ring_path, MAX_REOPENED_RING_BYTES, record.reserved_offset) {
                Some(ring) => ring,
                None => {
                    tracing::info!(pane = %record.id, "no ring left by the last host; offsets continue after a gap");
                    let base = exact_end(&record, &store).unwrap_or(record.reserved_offset);
                    OutputRing::create(Some(&ring_path), ring_bytes, base)?
                }
            };
            // Its group, found again by its name.
            let cgroup = keepers.existing_cgroup(&record.id, record.generation);
            let mut beginning = Beginning::new(record, ring, &store);
            beginning.cgroup = cgroup;
            Ok((handover, beginning))
        })
        .await?;
        // The record is written once the pane is assembled: with the turn
        // that was open in it, open again.
        Pane::assemble(
            beginning,
            behaviour,
            handover,
            pane_limits,
            records.clone(),
            restored_by::KEEPER,
            FirstRecord::ToWrite,
        )
        .await
    }

    async fn assemble(
        beginning: Beginning,
        behaviour: Behaviour,
        handover: keeper::Handover,
        pane_limits: PaneLimits,
        records: RecordStore,
        restored_by: &'static str,
        first_record: FirstRecord,
    ) -> io::Result<Arc<Pane>> {
        let Beginning { mut record, ring, screen, first_screen, caught_up, end_marker, cgroup } = beginning;
        let base = ring.end();
        let start_snapshot = (restored_by == restored_by::KEEPER).then_some(first_screen);
        let mut turns = TurnTracker::new(behaviour.completion, behaviour.hook_injection);
        if restored_by == restored_by::KEEPER {
            turns.taken_back(record.activity.as_deref());
        }
        let reopened = match (restored_by, record.open_turn.take()) {
            (restored_by::KEEPER, Some(turn)) => turns.reopen(base, turn.submitted.as_deref().unwrap_or("")),
            _ => None,
        };
        // What the output after the saved screen says of the turn now.
        let caught_up = match restored_by {
            restored_by::KEEPER => turns.caught_up(&caught_up, base),
            _ => None,
        };
        let ready_for_input = turns.ready_for_input();
        let io_fd = handover.master;
        set_nonblocking(&io_fd)?;
        handover.control.set_nonblocking(true)?;
        let (control_read, control_write) = tokio::net::UnixStream::from_std(handover.control)?.into_split();
        let info = PaneInfo {
            id: record.id.clone(),
            runtime: record.runtime.clone(),
            generation: record.generation,
            pid: handover.pid,
            cwd: record.cwd.clone(),
            created_at_ms: record.created_at_ms,
            labels: record.start.labels.clone(),
        };
        let notify_token = record.notify_token.clone();
        let size = record.size;
        let durable = DurableRecord::new(record, end_marker, records);
        let pane = Arc::new(Pane {
            info,
            interrupt_keys: behaviour.interrupt_keys,
            interrupt_presses: behaviour.interrupt_presses.max(1),
            notify_token,
            keeper_pid: handover.keeper_pid,
            cgroup,
            process_started: match handover.exited {
                None => super::sweep::start_time(handover.pid),
                Some(_) => None,
            },
            drops_early_input: behaviour.drops_early_input,
            raw_input: super::raw_input::RawInput::new(behaviour.reads_raw_input, behaviour.ready_marker.clone()),
            reference_capture: behaviour.reference_capture.clone(),
            reference_pattern: behaviour.reference_pattern.clone(),
            session_capture: match (
                &behaviour.reference_capture,
                &behaviour.session_store_location,
                &behaviour.reference_pattern,
            ) {
                (ReferenceCapture::SessionStore(store), Some(location), Some(pattern)) => Some(SessionCapture::new(
                    store.clone(),
                    location.clone(),
                    behaviour.process_started.unwrap_or_else(SystemTime::now),
                    pattern.clone(),
                )),
                _ => None,
            },
            turns: Mutex::new(turns),
            output: PaneOutput::new(ring),
            output_taps: OutputTaps::default(),
            model: TerminalModel::new(screen, pane_limits.screen_sleep_after, start_snapshot),
            progress: ProgressCell::new(Progress::new(base, size, ready_for_input)),
            // Safety: the OwnedFd is moved into the AsyncFd, which keeps it
            // open and unchanged for as long as it is registered.
            io: unsafe { AsyncFd::register(io_fd) }.map_err(io::Error::from)?,
            input: InputLine::default(),
            news: NewsOutlet::default(),
            keeper_control: Mutex::new(Some(control_write)),
            durable,
            restored_by,
        });
        pane.durable.writer.start(Arc::downgrade(&pane));
        pane.publish(reopened);
        pane.publish(caught_up);
        if first_record == FirstRecord::ToWrite {
            // As for a start: found by a host that restarts from here on,
            // on the disk a moment later.
            pane.write_record(false).await;
        }
        let durable = Arc::clone(&pane);
        tokio::spawn(async move { durable.save_record().await });
        // Nothing is read yet: the end is exact.
        pane.record_saved_at(base);
        tokio::spawn(reader::run(Arc::clone(&pane)));
        tokio::spawn(screen_follower::run(Arc::clone(&pane)));
        tokio::spawn(exit::watch(Arc::clone(&pane), control_read, handover.exited));
        tokio::spawn(recorder::run(Arc::clone(&pane)));
        if behaviour.completion == CompletionSignal::ScreenHeuristic {
            tokio::spawn(quiet_watch::run(Arc::clone(&pane)));
        }
        Ok(pane)
    }
}

/// What the record of a new process's pane begins with, before the
/// process exists: its identity, its start, and where its offsets go on
/// from.
#[derive(Debug)]
pub(crate) struct NewProcess {
    /// The pane's id.
    pub id: PaneId,
    /// The runtime it runs.
    pub runtime: String,
    /// The client's request, as the record keeps it.
    pub start: StartParams,
    /// The process's working directory.
    pub cwd: String,
    /// The terminal's size.
    pub size: Size,
    /// The keeper's socket for the pane, where a restarted host takes it
    /// back.
    pub keeper_socket: PathBuf,
    /// The token `panehost notify` proves the pane with.
    pub notify_token: String,
    /// 1 for a new pane; one more than the last for a process started
    /// again.
    pub generation: u64,
    /// When the pane was made, ms since the epoch.
    pub created_at_ms: u64,
    /// Where the offsets go on from (0 for a new pane).
    pub reserved_offset: u64,
    /// The native session it resumes, when known.
    pub native_reference: Option<String>,
    /// `started`, or how the pane's process was started again.
    pub restored_by: &'static str,
}

impl NewProcess {
    /// The pane's first record, for its process `pid`.
    fn record(self, pid: u32) -> PaneRecord {
        PaneRecord {
            version: RECORD_VERSION,
            id: self.id,
            runtime: self.runtime,
            generation: self.generation,
            pid,
            keeper_socket: self.keeper_socket,
            start: self.start,
            cwd: self.cwd,
            size: self.size,
            created_at_ms: self.created_at_ms,
            notify_token: self.notify_token,
            native_reference: self.native_reference,
            reserved_offset: self.reserved_offset,
            screen: None,
            exit: None,
            open_turn: None,
            // Nothing is known yet (a shell has not drawn its prompt).
            activity: Some(panehost_ipc::turn::activity::UNKNOWN.to_owned()),
            closing: false,
            typing: false,
        }
    }
}

/// What a keeper hands over for a new process: the handover, and the
/// pane's own control group if the process is in one.
#[derive(Debug)]
pub(crate) struct HandedOver {
    /// The PTY, the process and the keeper's connection.
    pub handover: keeper::Handover,
    /// The pane's own control group (`cgroups.rs`), if the process is in it.
    pub cgroup: Option<PathBuf>,
}

/// A pane as the host begins to serve it: its record (offsets reserved
/// from its ring's end, the screen saved there), its ring, its terminal
/// screen and its end marker. Made off the async workers: the ring and the
/// end marker are files.
struct Beginning {
    record: PaneRecord,
    /// The output so far (empty for a new process); this host's offsets
    /// go on from its end.
    ring: OutputRing,
    screen: TerminalScreen,
    /// The screen at the ring's end.
    first_screen: ScreenSnapshot,
    /// The terminal notices in the output the ring held after the saved
    /// screen (which the last host may not have acted on before it died).
    caught_up: Vec<TerminalNotice>,
    end_marker: EndMarker,
    /// The pane's own control group, if it has one (`cgroups.rs`).
    cgroup: Option<PathBuf>,
}

impl Beginning {
    /// Reserves offsets from the ring's end, makes the screen there (the
    /// record's saved one, if any, and what the ring holds after it) and
    /// saves it in the record, and opens the end marker ("open": nothing
    /// is settled yet).
    fn new(mut record: PaneRecord, ring: OutputRing, records: &RecordStore) -> Beginning {
        let base = ring.end();
        record.reserved_offset = base + RESERVE_STEP;
        // A record without a screen (a taken-back pane whose record was
        // lost, or too large to read whole) has it rebuilt from the output
        // the ring holds, drawn on a blank screen.
        let rebuilt = RecordedScreen { offset: ring.unbroken_start(), formatted: panehost_ipc::ByteBuf(Vec::new()) };
        let saved = record.screen.as_ref().or(Some(&rebuilt));
        let redraw = saved.map_or(&[][..], |saved| saved.formatted.as_slice());
        // The output after the saved screen, when the ring holds all of it
        // (a host killed while output flowed saved the screen a moment
        // before its end); else the saved screen stands for the end, and
        // the restore's resize nudge has the program redraw it.
        let after_saved = saved.and_then(|saved| ring.held_between(saved.offset, base));
        let mut screen = match (&after_saved, saved) {
            (Some(_), Some(saved)) => TerminalScreen::new(record.size, saved.offset, redraw),
            _ => TerminalScreen::new(record.size, base, redraw),
        };
        // The marks between the start of a turn the record holds open and
        // its saved screen: the last host may have parsed its command's end
        // into the screen before its turns knew of it, and saved both.
        let mut caught_up = record
            .open_turn
            .as_ref()
            .zip(record.screen.as_ref())
            .and_then(|(turn, saved)| ring.held_between(turn.offset, saved.offset))
            .map(|before_saved| {
                let mut scratch = TerminalScreen::new(record.size, 0, &[]);
                scratch.process(&before_saved);
                scratch.take_notices()
            })
            .unwrap_or_default();
        if let Some(output) = &after_saved {
            screen.process(output);
        }
        // Taken here, so that the follower's first chunk does not report
        // them as its own.
        caught_up.extend(screen.take_notices());
        // The record shows the screen where this host's offsets begin.
        let first_screen = screen.snapshot();
        record.screen = Some(RecordedScreen { offset: base, formatted: first_screen.formatted.clone() });
        let end_marker = EndMarker::create(&records.end_marker_path(&record.id));
        Beginning { record, ring, screen, first_screen, caught_up, end_marker, cgroup: None }
    }
}

/// Whether a pane's first record is on its way to the disk when the pane
/// is assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstRecord {
    /// Written with the launch, off the async workers.
    Written,
    /// To be written once the pane is assembled (it holds a reopened turn).
    ToWrite,
}

/// How a pane's runtime behaves, from its launch plan (kept across a host
/// restart through the runtime's descriptor).
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// The interrupt keys.
    pub interrupt_keys: Vec<u8>,
    /// How many times they are pressed.
    pub interrupt_presses: u8,
    /// How the end of a turn is observed.
    pub completion: CompletionSignal,
    /// How the hooks were injected (and their payloads read).
    pub hook_injection: Option<HookInjection>,
    /// Whether early input is lost.
    pub drops_early_input: bool,
    /// Whether the program reads raw keys (a submission waits for raw mode).
    pub reads_raw_input: bool,
    /// What the program's screen shows once it reads its first submission.
    pub ready_marker: Option<String>,
    /// Where the session's native reference is captured.
    pub reference_capture: ReferenceCapture,
    /// The pattern a captured reference must match.
    pub reference_pattern: Option<ReferencePattern>,
    /// Where the CLI's session store is for this launch's environment, when
    /// the reference is captured from it.
    pub session_store_location: Option<PathBuf>,
    /// When the process was about to be started (sessions created since
    /// are its own); unknown for a pane taken back from its keeper.
    pub process_started: Option<SystemTime>,
}

impl Behaviour {
    /// The behaviour a launch plan describes.
    pub fn of(plan: &LaunchPlan) -> Behaviour {
        Behaviour {
            interrupt_keys: plan.interrupt_keys.clone(),
            interrupt_presses: plan.interrupt_presses,
            completion: plan.completion,
            hook_injection: plan.hook_injection,
            drops_early_input: plan.drops_early_input,
            reads_raw_input: plan.reads_raw_input,
            ready_marker: plan.ready_marker.clone(),
            reference_capture: plan.reference_capture.clone(),
            reference_pattern: plan.reference_pattern.clone(),
            session_store_location: match &plan.reference_capture {
                ReferenceCapture::SessionStore(store) => store.location(&plan.env),
                _ => None,
            },
            process_started: None,
        }
    }
}

/// The exact end the pane's end marker holds, when the record agrees with
/// it: within the reservation, and the saved screen (if any) showing all
/// the output up to it.
fn exact_end(record: &PaneRecord, records: &RecordStore) -> Option<u64> {
    let end = EndMarker::read_exact(&records.end_marker_path(&record.id))?;
    let screen_at = record.screen.as_ref().map_or(0, |screen| screen.offset);
    (end <= record.reserved_offset && screen_at == end).then_some(end)
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// A pane's notify token: 128 bits from the OS random source, in hex.
fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(read) => filled += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}
