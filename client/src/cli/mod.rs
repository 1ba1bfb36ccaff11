//! The `panehost` command line.
//!
//! The binary lives in the host crate and only calls [`main`] with its
//! daemon entry point: `panehost host` runs the daemon in the foreground,
//! and every other subcommand is a client that starts the daemon on demand
//! when no host answers.
//!
//! Exit codes: 0 on success, 1 when the host answers with an error (printed
//! as `error: CODE: message`) or anything else fails, 2 for usage errors.
//! `panehost canary` adds 3, 4 and 5 for its verdicts (docs/CANARY.md).

mod ask;
mod attach;
mod canary;
mod close;
mod context;
mod control;
mod detach_key;
mod events;
mod history;
mod host;
mod host_process;
mod inspect;
mod interrupt;
mod json;
mod login;
mod ls;
mod new;
mod notify;
mod output;
mod pair_arg;
mod printable;
mod remote;
mod resize;
mod runtimes;
mod send;
mod size_arg;
mod start;
mod stdin_thread;
mod stop;
mod table;
mod terminal;
mod terminal_width;
mod text_wrap;
mod wait;
mod watch;
mod web;

use crate::error::ClientError;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use context::Context;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

pub use canary::{CanaryLaunch, CanaryOutput, CanaryTarget, LiveStage};

/// What `panehost host` hands to the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLaunch {
    /// The socket path to listen on.
    pub socket: PathBuf,
    /// The directory for pane records and the host's own files.
    pub state_dir: PathBuf,
    /// A `tracing` filter for the host's log (`--log` or `PANEHOST_LOG`),
    /// when one was given.
    pub log_filter: Option<String>,
}

/// What the binary supplies that this crate cannot: the parts of
/// `panehost` that need the daemon or the runtime descriptors.
#[derive(Debug, Clone, Copy)]
pub struct Entrypoints {
    /// Runs the daemon in the foreground (blocking, with its own async
    /// runtime) for `panehost host`.
    pub run_host: fn(HostLaunch) -> anyhow::Result<()>,
    /// Runs the canary (blocking) for `panehost canary`.
    pub run_canary: fn(CanaryLaunch) -> anyhow::Result<CanaryOutput>,
    /// The ids of the runtimes that exist for this repository's tests (the
    /// descriptors say which): `panehost runtimes` lists them only with
    /// `--all`.
    pub test_runtimes: fn() -> Vec<String>,
}

/// Runs the `panehost` command with the process's arguments and returns its
/// exit code.
pub fn main(entrypoints: Entrypoints) -> ExitCode {
    let parsed = Cli::command()
        .term_width(terminal_width::columns())
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let result = Context::resolve(&cli.globals).and_then(|context| match cli.command {
        Some(Command::Host | Command::Canary(_) | Command::Notify(_)) if context.remote.is_some() => {
            Err(UsageError("--remote is for clients: `host`, `canary` and `notify` run on this machine".into()).into())
        }
        Some(Command::Host) => host::run(&context, entrypoints.run_host).map(|()| ExitCode::SUCCESS),
        Some(Command::Canary(args)) => canary::run(&context, args, entrypoints.run_canary),
        Some(Command::Stop(args)) => stop::run(&context.towards_state_dirs_host(), args).map(|()| ExitCode::SUCCESS),
        Some(command) => {
            run_client(context.towards_state_dirs_host(), command, &entrypoints).map(|()| ExitCode::SUCCESS)
        }
        // On its defaults, panehost opens a shell in a new pane, attached.
        None => run_client(context.towards_state_dirs_host(), Command::New(new::NewArgs::default()), &entrypoints)
            .map(|()| ExitCode::SUCCESS),
    });
    match result {
        Ok(code) => code,
        Err(error) => report(&error),
    }
}

/// Prints a failure and picks the exit code. What a host said in it (an
/// error's code, message and limitation, or a name quoted in another error)
/// is shown with its control characters escaped.
fn report(error: &anyhow::Error) -> ExitCode {
    if let Some(usage) = error.downcast_ref::<UsageError>() {
        output::eprint_lines(&format!("error: {usage}"));
        return ExitCode::from(2);
    }
    match error.chain().find_map(|cause| cause.downcast_ref::<ClientError>()) {
        Some(ClientError::Host(body)) => {
            let (code, message) = (printable::line(&body.code), printable::line(&body.message));
            match &body.limitation {
                Some(limitation) => {
                    output::eprint_lines(&format!("error: {code}: {message} ({})", printable::line(limitation)))
                }
                None => output::eprint_lines(&format!("error: {code}: {message}")),
            }
        }
        _ => output::eprint_lines(&format!("error: {error:#}")),
    }
    ExitCode::from(1)
}

/// A mistake in how the command was called, found after parsing (exit 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Runs a client subcommand on a single-threaded runtime.
fn run_client(context: Context, command: Command, entrypoints: &Entrypoints) -> anyhow::Result<()> {
    context.init_logging();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        match command {
            Command::Host | Command::Canary(_) | Command::Stop(_) => {
                unreachable!("handled before the runtime starts")
            }
            Command::New(args) => new::run(&context, args).await,
            Command::Start(args) => start::run(&context, args).await,
            Command::Ls(args) => ls::run(&context, args).await,
            Command::Send(args) => send::run(&context, args).await,
            Command::Interrupt(args) => interrupt::run(&context, args).await,
            Command::Inspect(args) => inspect::run(&context, args).await,
            Command::History(args) => history::run(&context, args).await,
            Command::Events(args) => events::run(&context, args).await,
            Command::Attach(args) => attach::run(&context, args).await,
            Command::Resize(args) => resize::run(&context, args).await,
            Command::Close(args) => close::run(&context, args).await,
            Command::Runtimes(args) => runtimes::run(&context, args, entrypoints.test_runtimes).await,
            Command::Login(args) => login::run(&context, args).await,
            Command::Ask(args) => ask::run(&context, args).await,
            Command::Wait(args) => wait::run(&context, args).await,
            Command::Watch(args) => watch::run(&context, args).await,
            Command::Notify(args) => notify::run(&context, args).await,
            Command::Control => control::run(&context).await,
            Command::Web(args) => web::run(&context, args).await,
            Command::Up(args) => remote::up(&context, args).await,
        }
    });
    // A thread blocked on standard input must not keep the process alive.
    runtime.shutdown_background();
    result
}

/// What `panehost --help` ends with.
const MAIN_AFTER_HELP: &str = "\
Without a subcommand, panehost opens a shell in a new pane, attached.
A client starts a host in the background when none answers.

Examples:
  panehost start shell                 # prints the pane's id
  panehost send p3fa9c01b 'echo hello' --enter
  panehost inspect p3fa9c01b
  panehost runtimes

Subcommands that panehost runs itself are left out above: host, up and
notify (each has its --help; see README.md).";

const START_EXAMPLES: &str = "\
Examples:
  panehost start shell
  panehost start shell --label task=42 -- make test
  panehost start claude --model sonnet --require-ready
  panehost start codex --resume-latest --profile read_only";

const RUNTIMES_EXAMPLES: &str = "\
Examples:
  panehost runtimes
  panehost runtimes --wide
  panehost runtimes --probe claude";

const WAIT_EXAMPLES: &str = "\
Examples:
  panehost wait p3fa9c01b '[$#] $'      # a shell's prompt (root's ends in #)
  panehost wait p3fa9c01b 'done' --timeout 60
  panehost wait p3fa9c01b 'Welcome' --output --from 0";

const CANARY_EXIT_CODES: &str = "\
Exit codes:
  0  PASS: the version was read, is at or above the floor, and every
     requirement is in its help
  3  PASS_WITH_UNVERIFIED: nothing failed, but something could not be
     verified offline (the version, the floor, a self-update switch)
  4  FAIL: the candidate breaks the adapter
  5  BLOCKED: nothing could be judged (no sandbox, staging failed)
  1  a request the canary cannot act on; 2 a usage error
With --all-installed: the most severe verdict's code (FAIL, BLOCKED, then
PASS_WITH_UNVERIFIED), 0 when nothing needed judging. See docs/CANARY.md.

Examples:
  panehost canary --runtime claude --version 2.1.240
  panehost canary --runtime codex --binary ~/bin/codex --json
  panehost canary --all-installed";

#[derive(Debug, Parser)]
#[command(
    name = "panehost",
    version,
    about = "A per-user host of terminal panes for coding agents and shells.",
    after_help = MAIN_AFTER_HELP
)]
struct Cli {
    #[command(flatten)]
    globals: GlobalArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The help heading of the options every subcommand takes.
const GLOBAL_OPTIONS: &str = "Global options";
/// The help heading of the options that aim a client at another machine.
const REMOTE_OPTIONS: &str = "Remote options (another machine, through ssh)";

/// Options every subcommand takes.
#[derive(Debug, clap::Args)]
pub(crate) struct GlobalArgs {
    /// The host's socket [default: $XDG_RUNTIME_DIR/panehost/host.sock, else a per-user directory under the temp dir]
    #[arg(long, global = true, env = "PANEHOST_SOCKET", value_name = "PATH", help_heading = GLOBAL_OPTIONS)]
    pub(crate) socket: Option<PathBuf>,
    /// The host's state directory [default: $XDG_STATE_HOME/panehost, else ~/.local/state/panehost]
    #[arg(long, global = true, env = "PANEHOST_STATE_DIR", value_name = "DIR", help_heading = GLOBAL_OPTIONS)]
    pub(crate) state_dir: Option<PathBuf>,
    /// Log filter, such as `debug` or `panehost_client=trace` (client logs go to standard error)
    #[arg(long, global = true, env = "PANEHOST_LOG", value_name = "FILTER", help_heading = GLOBAL_OPTIONS)]
    pub(crate) log: Option<String>,
    /// Drive the host of a user on another machine through ssh: [user@]host, or ssh://[user@]host[:port]
    #[arg(long, global = true, env = "PANEHOST_REMOTE", value_name = "DEST", help_heading = REMOTE_OPTIONS)]
    pub(crate) remote: Option<String>,
    /// With --remote: the panehost program on the other machine, e.g. ~/.cargo/bin/panehost [default: panehost]
    #[arg(long, global = true, env = "PANEHOST_REMOTE_PROGRAM", value_name = "PROGRAM", help_heading = REMOTE_OPTIONS)]
    pub(crate) remote_panehost: Option<String>,
    /// With --remote: the host's socket on the other machine [default: the default there]
    #[arg(long, global = true, value_name = "PATH", help_heading = REMOTE_OPTIONS)]
    pub(crate) remote_socket: Option<String>,
    /// With --remote: the ssh configuration file (ssh -F) [default: ssh's own]
    #[arg(long, global = true, env = "PANEHOST_SSH_CONFIG", value_name = "FILE", help_heading = REMOTE_OPTIONS)]
    pub(crate) ssh_config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the host in the foreground (what a client starts on demand, and
    /// the systemd unit runs).
    #[command(hide = true, after_help = "Examples:\n  panehost host\n  panehost host --socket /run/user/1000/ph.sock")]
    Host,
    /// Stop the host; its panes stay with their keepers for the next host
    /// (or are closed, with --close-panes).
    #[command(after_help = "Examples:\n  panehost stop\n  panehost stop --close-panes")]
    Stop(stop::StopArgs),
    /// Start a pane and attach to it (what plain `panehost` does, with a shell).
    #[command(after_help = "Examples:\n  panehost new\n  panehost new claude --cwd ~/src/app")]
    New(new::NewArgs),
    /// Start a pane and print its id.
    #[command(after_help = START_EXAMPLES)]
    Start(start::StartArgs),
    /// List panes.
    #[command(
        visible_alias = "list",
        after_help = "Examples:\n  panehost ls\n  panehost ls --label task=42\n  panehost list --json"
    )]
    Ls(ls::LsArgs),
    /// Type text (or standard input) into a pane.
    #[command(
        after_help = "Examples:\n  panehost send p3fa9c01b 'echo hello' --enter\n  printf 'ls\\n' | panehost send p3fa9c01b"
    )]
    Send(send::SendArgs),
    /// Interrupt what a pane is doing.
    #[command(
        after_help = "Examples:\n  panehost interrupt p3fa9c01b\n  panehost interrupt p3fa9c01b --terminate --json"
    )]
    Interrupt(interrupt::InterruptArgs),
    /// Show a pane and its screen.
    #[command(after_help = "Examples:\n  panehost inspect p3fa9c01b\n  panehost inspect p3fa9c01b --json")]
    Inspect(inspect::InspectArgs),
    /// Print a pane's last lines of output as text.
    #[command(after_help = "Examples:\n  panehost history p3fa9c01b\n  panehost history p3fa9c01b --lines 200")]
    History(history::HistoryArgs),
    /// Stream a pane's output and events.
    #[command(after_help = "Examples:\n  panehost events p3fa9c01b\n  panehost events p3fa9c01b --json --from 0")]
    Events(events::EventsArgs),
    /// Attach this terminal to a pane.
    #[command(
        after_help = "Examples:\n  panehost attach p3fa9c01b          # Ctrl-\\ detaches\n  panehost attach p3fa9c01b --detach-key ^B"
    )]
    Attach(attach::AttachArgs),
    /// Change a pane's terminal size.
    #[command(after_help = "Examples:\n  panehost resize p3fa9c01b 120x40")]
    Resize(resize::ResizeArgs),
    /// End a pane's process and forget the pane.
    #[command(after_help = "Examples:\n  panehost close p3fa9c01b\n  panehost close p3fa9c01b --json")]
    Close(close::CloseArgs),
    /// List the runtimes the host can start.
    #[command(after_help = RUNTIMES_EXAMPLES)]
    Runtimes(runtimes::RuntimesArgs),
    /// Sign in to a runtime in a new pane (attached when this is a terminal).
    #[command(after_help = "Examples:\n  panehost login codex")]
    Login(login::LoginArgs),
    /// Submit a prompt and wait until the turn ends.
    #[command(
        after_help = "Examples:\n  panehost ask p3fa9c01b 'ls | wc -l'\n  panehost ask p3fa9c01b 'Summarise README.md' --timeout 300 --json"
    )]
    Ask(ask::AskArgs),
    /// Wait until a pane's screen (or output) matches a pattern.
    #[command(after_help = WAIT_EXAMPLES)]
    Wait(wait::WaitArgs),
    /// Follow every pane: each that starts, changes activity, size or title, exits or leaves.
    #[command(after_help = "Examples:\n  panehost watch\n  panehost watch --json")]
    Watch(watch::WatchArgs),
    /// Report a turn signal from a CLI's hook (run inside a pane).
    #[command(
        hide = true,
        after_help = "Examples (what a hook inside a pane runs):\n  panehost notify --event turn_completed < payload.json"
    )]
    Notify(notify::NotifyArgs),
    /// Bridge JSON-lines requests on standard input to the host.
    #[command(after_help = "Examples:\n  echo '{\"id\":1,\"request\":{\"list\":{}}}' | panehost control")]
    Control,
    /// Serve a web terminal for the panes on a local HTTP port.
    #[command(
        after_help = "Examples:\n  panehost web --install-assets     # once\n  panehost web\n  panehost web --listen 127.0.0.1:8080"
    )]
    Web(web::WebArgs),
    /// Start the host unless one answers, and print its socket as JSON
    /// (what --remote runs on the other machine).
    #[command(hide = true, after_help = "Examples (what --remote runs on the other machine):\n  panehost up --hold")]
    Up(remote::UpArgs),
    /// Judge a candidate version of a runtime's CLI offline; never installs it.
    #[command(after_help = CANARY_EXIT_CODES)]
    Canary(canary::CanaryArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn start_takes_the_command_after_a_double_dash() {
        let cli = Cli::try_parse_from(["panehost", "start", "shell", "--size", "100x30", "--", "ls", "-l"]).unwrap();
        match cli.command {
            Some(Command::Start(args)) => {
                assert_eq!(args.runtime, "shell");
                assert_eq!(args.command, ["ls", "-l"]);
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn no_subcommand_means_a_new_attached_shell() {
        let cli = Cli::try_parse_from(["panehost"]).unwrap();
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["panehost", "new"]).unwrap();
        assert!(matches!(cli.command, Some(Command::New(args)) if args.runtime == "shell"));
    }

    #[test]
    fn a_size_out_of_bounds_is_a_usage_error() {
        for size in ["0x24", "1x24", "65535x65535"] {
            let error = Cli::try_parse_from(["panehost", "resize", "p1", size]).unwrap_err();
            assert_eq!(error.exit_code(), 2);
            assert!(error.to_string().contains("out of range"), "{error}");
        }
    }

    #[test]
    fn canary_takes_a_version_or_a_binary_or_all_installed() {
        let cli = Cli::try_parse_from(["panehost", "canary", "--runtime", "claude", "--version", "2.1.200"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Canary(_))));
        assert!(Cli::try_parse_from(["panehost", "canary", "--runtime", "x", "--binary", "/bin/x", "--json"]).is_ok());
        for wrong in [
            &["panehost", "canary", "--runtime", "claude"][..],
            &["panehost", "canary", "--runtime", "claude", "--version", "1", "--binary", "/bin/x"],
            &["panehost", "canary", "--all-installed", "--version", "1"],
            &["panehost", "canary", "--version", "1"],
        ] {
            assert_eq!(Cli::try_parse_from(wrong).unwrap_err().exit_code(), 2, "{wrong:?}");
        }
    }

    #[test]
    fn the_canary_unit_runs_a_command_line_that_parses() {
        let unit = include_str!("../../../deploy/panehost-canary.service");
        let exec = unit.lines().find_map(|line| line.strip_prefix("ExecStart=")).expect("an ExecStart line");
        let mut words: Vec<&str> = exec.split_whitespace().collect();
        assert!(words[0].ends_with("/panehost"), "{exec}");
        words[0] = "panehost";
        let cli = Cli::try_parse_from(words).unwrap();
        assert!(matches!(cli.command, Some(Command::Canary(args)) if args.is_all_installed()));
    }

    #[test]
    fn global_options_go_after_the_subcommand_too() {
        let cli = Cli::try_parse_from(["panehost", "ls", "--socket", "/x/s.sock"]).unwrap();
        assert_eq!(cli.globals.socket.as_deref(), Some(std::path::Path::new("/x/s.sock")));
    }
}
