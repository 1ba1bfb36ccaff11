//! Taking panes back after a host restart.
//!
//! For each pane record: when its keeper still runs, the pane comes back
//! as it was (same id, generation and pid; offsets continue from the
//! record's reservation; the screen from the saved one, refreshed by a
//! resize nudge). When the keeper is gone (a reboot, a killed keeper), the
//! pane is restored by a new process through the runtime's native resume:
//! the recorded session reference where the runtime resumes exact
//! references, else "the latest", else a fresh start where the runtime
//! declares `HOST_LOSS_RESTARTS_FRESH`; the generation grows and
//! `restored_by` says which. Two records holding the same reference (a
//! session store cannot tell two panes of one runtime in one directory
//! apart) resume neither by it. A record that cannot be read is reported
//! and moved aside; it never stops the others, and a pane whose keeper
//! still holds its process is taken back without it (see
//! [`record_salvage`](crate::record_salvage)).

use crate::handlers::turns;
use crate::limits;
use crate::limits::RESTORE_PANE_TIMEOUT;
use crate::pane::{Behaviour, Launch, Pane};
use crate::record_salvage;
use crate::registry::Departure;
use crate::server::host_state::HostState;
use crate::store::records::{BadRecord, PaneRecord};
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::{CompletionSignal, ResumeMode};
use panehost_ipc::pane::restored_by;
use panehost_ipc::{limitation, ResumeRequest, Size};
use std::collections::HashSet;
use std::sync::Arc;

/// Restores every recorded pane. Each pane's restore is bounded by
/// [`RESTORE_PANE_TIMEOUT`]; one that fails or takes longer is logged and
/// its record removed, and the others go on. Then undoes the starts the
/// last host did not finish (see [`undo_unfinished_starts`]).
pub(crate) async fn restore_panes(host: Arc<HostState>) {
    let host = &host;
    let store = host.records.clone();
    let Ok((records, bad)) = tokio::task::spawn_blocking(move || store.load_all()).await else {
        tracing::error!("reading the pane records failed; no pane is restored");
        return;
    };
    let salvaged = salvage_all(host, &bad).await;
    let kept: HashSet<_> = records.iter().chain(&salvaged).map(|record| record.id.clone()).collect();
    let store = host.records.clone();
    let _ = tokio::task::spawn_blocking(move || store.remove_stray_rings(&kept)).await;
    let recorded: HashSet<std::path::PathBuf> =
        records.iter().chain(&salvaged).map(|record| record.keeper_socket.clone()).collect();
    let sockets = host.keepers.sockets_dir().to_path_buf();
    let undone = tokio::task::spawn_blocking(move || undo_unfinished_starts(&sockets, &recorded)).await;
    if let Ok(undone) = undone {
        for (socket, outcome) in undone {
            tracing::warn!(socket = %socket.display(), %outcome, "a start the last host did not finish is undone");
        }
    }
    for record in &bad {
        tracing::warn!(path = %record.path.display(), reason = %record.reason, "unreadable pane record moved aside");
    }
    for record in salvaged {
        let id = record.id.clone();
        let behaviour = behaviour_of(host, &record);
        match Pane::adopt(record, behaviour, host.pane_services()).await {
            Ok(pane) => {
                tracing::warn!(pane = %id, runtime = %pane.info().runtime, "pane taken back from its keeper without its record");
                host.registry.insert(pane);
            }
            Err(err) => tracing::warn!(pane = %id, %err, "a pane without its record could not be taken back"),
        }
    }
    let shared = shared_references(&records);
    for mut record in records {
        let id = record.id.clone();
        if let Some(reference) = record.native_reference.as_ref().filter(|reference| shared.contains(*reference)) {
            // Two panes recorded the same session (a session store cannot
            // tell two panes of one runtime in one directory apart): neither
            // resumes it by reference, so no session is resumed twice.
            tracing::warn!(pane = %id, %reference, "session reference recorded by another pane too; not resumed by it");
            record.native_reference = None;
        }
        if record.closing {
            finish_close(host, record).await;
            continue;
        }
        let restored = tokio::time::timeout(RESTORE_PANE_TIMEOUT, restore(host, record))
            .await
            .unwrap_or_else(|_| Err(format!("not restored within {} s", RESTORE_PANE_TIMEOUT.as_secs())));
        match restored {
            Ok(how) => tracing::info!(pane = %id, restored_by = how, "pane restored"),
            Err(reason) => {
                tracing::warn!(pane = %id, %reason, "pane not restored; its record is removed");
                host.records.remove(&id);
                host.registry.forget(&id, Departure::EndedAtRestart(reason));
            }
        }
    }
}

/// The references (per runtime) that more than one record of a pane still
/// running holds (a pane whose process exited is not resumed at all).
fn shared_references(records: &[PaneRecord]) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut shared = HashSet::new();
    for record in records.iter().filter(|record| record.exit.is_none()) {
        if let Some(reference) = &record.native_reference {
            if !seen.insert((record.runtime.clone(), reference.clone())) {
                shared.insert(reference.clone());
            }
        }
    }
    shared
}

/// Records for the panes whose records could not be read, made from what
/// their running processes and keepers still say (see
/// [`record_salvage`](crate::record_salvage)).
async fn salvage_all(host: &Arc<HostState>, bad: &[BadRecord]) -> Vec<PaneRecord> {
    let bad = bad.to_vec();
    let keepers_dir = host.keepers.sockets_dir().to_path_buf();
    let catalog = Arc::clone(&host.catalog);
    let salvage = move || {
        let mut salvaged = Vec::new();
        for record in &bad {
            let known = |runtime: &str| catalog.descriptor(runtime).is_some();
            match record_salvage::salvage(record, &keepers_dir, known) {
                Ok(found) => salvaged.push(found),
                Err(reason) => tracing::info!(path = %record.path.display(), %reason, "no pane to take back for it"),
            }
        }
        salvaged
    };
    tokio::task::spawn_blocking(salvage).await.unwrap_or_default()
}

/// How the host drives a pane of `record`'s runtime (a runtime it no
/// longer knows: keys for Ctrl-C and no turn signals).
fn behaviour_of(host: &HostState, record: &PaneRecord) -> Behaviour {
    let plan = host.catalog.admit(&record.start).ok();
    match &plan {
        Some(plan) => Behaviour::of(plan),
        None => Behaviour {
            interrupt_keys: b"\x03".to_vec(),
            interrupt_presses: 1,
            completion: CompletionSignal::Unobserved,
            hook_injection: None,
            drops_early_input: false,
            reads_raw_input: false,
            ready_marker: None,
            reference_capture: ReferenceCapture::None,
            reference_pattern: None,
            session_store_location: None,
            process_started: None,
        },
    }
}

async fn restore(host: &Arc<HostState>, record: PaneRecord) -> Result<&'static str, String> {
    let behaviour = behaviour_of(host, &record);
    let wall_time = wall_time_left(&record);
    match Pane::adopt(record.clone(), behaviour, host.pane_services()).await {
        Ok(pane) => {
            nudge(&pane, record.size);
            if record.typing {
                clear_cut_submission(&pane);
            }
            if let Some(left) = wall_time {
                turns::enforce_wall_time(Arc::clone(&pane), left);
            }
            host.registry.insert(pane);
            return Ok(restored_by::KEEPER);
        }
        Err(err) => tracing::info!(pane = %record.id, %err, "keeper gone; restoring through native resume"),
    }
    if record.exit.is_some() {
        return Err("its process had exited and its keeper is gone".into());
    }
    if !record.start.command.is_empty() && !record.start.rerun_after_host_loss {
        return Err("its keeper was gone, and its command is not run a second time unasked \
                    (start it with rerun_after_host_loss for that)"
            .into());
    }
    let descriptor = host.catalog.descriptor(&record.runtime).ok_or("its runtime is no longer known")?;
    let mut start = record.start.clone();
    let how = match (&record.native_reference, descriptor.resume_form(ResumeMode::Reference)) {
        (Some(reference), Some(_)) => {
            start.resume = Some(ResumeRequest::Reference(reference.clone()));
            restored_by::NATIVE_REFERENCE
        }
        _ if descriptor.resume_form(ResumeMode::ProviderSelection).is_some() => {
            start.resume = Some(ResumeRequest::Latest);
            restored_by::PROVIDER_SELECTION
        }
        _ if descriptor.limitations.iter().any(|code| code == limitation::HOST_LOSS_RESTARTS_FRESH) => {
            start.resume = None;
            restored_by::FRESH
        }
        _ => return Err("the runtime can neither resume nor declares a fresh restart".into()),
    };
    let plan = host.catalog.admit(&start).map_err(|err| err.to_string())?;
    host.runtime_gate.check_before_spawn(&host.catalog, &plan).await.map_err(|err| err.to_string())?;
    let size = record.size;
    let pane = Pane::relaunch(record, how, Launch { plan, start, size }, host.pane_services())
        .await
        .map_err(|err| err.to_string())?;
    if let Some(left) = wall_time {
        turns::enforce_wall_time(Arc::clone(&pane), left);
    }
    host.registry.insert(pane);
    Ok(how)
}

/// A pane the last host had begun to close: the close is finished, never
/// undone. Taken back from its keeper, it is listed until its close ends
/// (its subscribers resume and see it end `closed`); with its keeper gone,
/// nothing runs, and only the record is left to remove. Either way the
/// pane leaves as closed, and no process of it is started again.
async fn finish_close(host: &Arc<HostState>, record: PaneRecord) {
    let id = record.id.clone();
    let behaviour = behaviour_of(host, &record);
    let adopted =
        tokio::time::timeout(RESTORE_PANE_TIMEOUT, Pane::adopt(record, behaviour, host.pane_services())).await;
    let Ok(Ok(pane)) = adopted else {
        tracing::info!(pane = %id, "a close the last host began is finished: its keeper is gone");
        host.records.remove(&id);
        host.registry.forget(&id, Departure::Closed);
        return;
    };
    host.registry.insert(Arc::clone(&pane));
    let host = Arc::clone(host);
    tokio::spawn(async move {
        let (status, swept) = host.close_pane(&pane).await;
        tracing::info!(pane = %id, code = status.code, ended = swept.ended, "a close the last host began is finished");
    });
}

/// The last host died while it typed a submission to this pane, before
/// its Enter: the text, or a paste still open, may be on the command line,
/// where the next submission would be typed after it. At a shell's prompt
/// (no command started since: the turn is not open again) the paste is
/// ended and the line cleared (`ESC [201~` then Ctrl-U: an end marker with
/// no paste open is an unbound key bash drops, and Ctrl-U discards the
/// line). While a command runs with the terminal's line editing on, a text
/// typed ahead of it waits in the terminal's line: Ctrl-U, the line-kill
/// character, erases it there. The pane's place in its input line is taken before the pane is
/// listed, so no client's input comes first. An agent CLI's input box has
/// no key known to clear it; its text stays (PROTOCOL.md, section 9).
fn clear_cut_submission(pane: &Arc<Pane>) {
    if pane.completion() != CompletionSignal::ShellIntegration {
        tracing::warn!(pane = %pane.info().id, "a submission cut by the last host's end may be left in the program's input");
        return;
    }
    let place = pane.join_input_line();
    let pane = Arc::clone(pane);
    tokio::spawn(async move {
        let turn = place.wait().await;
        let keys: &[u8] = if !pane.busy() {
            b"\x1b[201~\x15"
        } else if !pane.terminal_in_raw_mode() {
            // A command runs, with the terminal's own line editing on: a
            // text typed ahead of it waits in the terminal's line, which
            // its line-kill character (Ctrl-U) erases; the command never
            // reads it.
            b"\x15"
        } else {
            // A command that reads keys itself: nothing is known to clear.
            b""
        };
        if keys.is_empty() {
            tracing::warn!(pane = %pane.info().id, "a submission cut by the last host's end may be left in the program's input");
        } else if let Err(err) = pane.write_input(&turn, keys, limits::INPUT_TIMEOUT).await {
            tracing::warn!(pane = %pane.info().id, %err, "the command line a cut submission left could not be cleared");
        } else {
            tracing::info!(pane = %pane.info().id, "the command line a cut submission left is cleared");
        }
        pane.record_typing(false).await;
    });
}

/// What is left of the pane's wall-time limit, counted from its creation
/// (a restart does not give it more time); `None` without a limit or once
/// the process has exited.
fn wall_time_left(record: &PaneRecord) -> Option<std::time::Duration> {
    let limit = record.start.max_wall_ms?;
    if record.exit.is_some() {
        return None;
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let ran = (now.as_millis() as u64).saturating_sub(record.created_at_ms);
    Some(std::time::Duration::from_millis(limit.saturating_sub(ran)))
}

/// A resize to one column less and back: a full-screen program redraws,
/// so the screen is current even if the saved one was not.
fn nudge(pane: &Pane, size: Size) {
    if size.cols > 1 {
        let _ = pane.resize(Size { cols: size.cols - 1, rows: size.rows });
    }
    let _ = pane.resize(size);
}

/// A host killed while it started a pane may leave a keeper holding a
/// process that no record names: the keeper had started it, the host had
/// not yet written its record, and no client was ever answered. Every such
/// pane socket in the keepers' directory is undone: its process group is
/// killed and the keeper told to let it go (a socket nobody listens on is
/// removed). Blocking; returns each socket and what was done.
fn undo_unfinished_starts(
    sockets: &std::path::Path,
    recorded: &HashSet<std::path::PathBuf>,
) -> Vec<(std::path::PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(sockets) else { return Vec::new() };
    let mut undone = Vec::new();
    for entry in entries.flatten() {
        let socket = entry.path();
        if recorded.contains(&socket) || socket.extension().and_then(|ext| ext.to_str()) != Some("sock") {
            continue;
        }
        let outcome = match crate::pane::keeper::connect(&socket) {
            Ok(handover) => end_unrecorded(handover),
            Err(err) => {
                let _ = std::fs::remove_file(&socket);
                format!("nothing answered ({err}); the socket file is removed")
            }
        };
        undone.push((socket, outcome));
    }
    undone
}

/// Kills an unrecorded pane's process group, waits (a few seconds) for its
/// keeper to report the exit, and releases it.
fn end_unrecorded(handover: crate::pane::keeper::Handover) -> String {
    use std::io::{BufRead, Write};
    let pid = handover.pid;
    if handover.exited.is_none() {
        if let Some(group) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = handover.control.set_read_timeout(Some(limits::UNRECORDED_EXIT_WAIT));
        let mut line = String::new();
        let bounded = std::io::Read::take(&handover.control, crate::keeper_wire::pane_lines::MAX_KEEPER_LINE as u64);
        let _ = std::io::BufReader::new(bounded).read_line(&mut line);
        if crate::keeper_wire::pane_lines::parse_exited(line.trim_end()).is_none() {
            return format!("process {pid} was killed, but its keeper did not report its exit");
        }
    }
    // Once the exit is known, `release` lets the keeper drop the pane.
    let _ = (&handover.control).write_all(crate::keeper_wire::pane_lines::RELEASE);
    format!("process {pid} ended and released")
}
