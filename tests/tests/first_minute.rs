//! What a newcomer meets first: stopping and replacing a host, and being
//! told when the host that answers is not the one just built.

mod support;

use panehost_ipc::{Encoding, Request, Response};
use support::command::Cli;
use support::*;

fn listed(host: &TestHost) -> Vec<panehost_ipc::PaneSummary> {
    let Response::Panes { panes } = host.connect(Encoding::Json).ok(Request::List { labels: Default::default() })
    else {
        panic!()
    };
    panes
}

#[test]
fn stop_ends_the_host_and_leaves_its_panes_for_the_next_one() {
    let mut host = TestHost::start();
    let cli = Cli::for_host(&host);
    let pane = host.connect(Encoding::Json).start(start_params("shell", &[]));
    let stopped = cli.ok(&["stop"]);
    assert!(stopped.contains(&format!("stopped the host (pid {})", host.pid())), "{stopped}");
    assert!(stopped.contains("its panes stay with their keepers"), "{stopped}");
    host.wait_exited();
    assert!(process_exists(pane.pid), "the pane's process outlives the host");
    // Nothing answers now; a second stop says so and succeeds.
    let again = cli.ok(&["stop"]);
    assert!(again.contains("no host is running at"), "{again}");

    host.restart();
    let back = listed(&host);
    assert_eq!(
        back.iter().map(|summary| (&summary.id, summary.restored_by.as_str())).collect::<Vec<_>>(),
        [(&pane.id, "keeper")]
    );

    // With --close-panes, the panes end with the host.
    let closed = cli.ok(&["stop", "--close-panes"]);
    assert!(closed.contains("closed its panes"), "{closed}");
    host.wait_exited();
    let deadline = std::time::Instant::now() + WAIT;
    while process_exists(pane.pid) {
        assert!(std::time::Instant::now() < deadline, "the pane's process outlived --close-panes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_command_says_when_the_host_runs_another_build_and_how_to_replace_it() {
    // A host started from an earlier build (a copy of the executable, then
    // replaced, as a rebuild does).
    let bin = tempfile::tempdir().unwrap();
    let earlier = bin.path().join("panehost");
    std::fs::copy(panehost_bin(), &earlier).unwrap();
    let host = TestHost::start_program(&earlier, &[]);
    std::fs::remove_file(&earlier).unwrap();
    let cli = Cli::for_host(&host);
    let outcome = cli.run(&["ls"]);
    assert!(outcome.status.success(), "{outcome:?}");
    assert!(outcome.stderr.contains("runs another build of panehost"), "{outcome:?}");
    assert!(outcome.stderr.contains("`panehost stop`"), "{outcome:?}");
    // The host this build starts is announced once, then says nothing.
    cli.ok(&["stop"]);
    let outcome = cli.run(&["ls"]);
    assert!(outcome.status.success(), "{outcome:?}");
    let started =
        format!("panehost: started a host (pid {{pid}}) at {}; `panehost stop` ends it", cli.socket.display());
    let pid = outcome.stderr.split("(pid ").nth(1).and_then(|rest| rest.split(')').next()).unwrap_or("?");
    assert_eq!(outcome.stderr, format!("{}\n", started.replace("{pid}", pid)), "{outcome:?}");
    assert!(pid.parse::<u32>().is_ok_and(process_exists), "the pid is the running host's: {outcome:?}");
    let outcome = cli.run(&["ls"]);
    assert!(outcome.status.success() && outcome.stderr.is_empty(), "{outcome:?}");
    cli.ok(&["stop", "--close-panes"]);
}
