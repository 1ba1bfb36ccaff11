//! The `panehost` command: `panehost host` runs the daemon, `panehost
//! canary` judges a candidate CLI; every other subcommand is a client.

fn main() -> std::process::ExitCode {
    // A keeper is this same executable, run by its host under the name
    // `panehost-keeper`: one file to install.
    if panehost_host::keeper::invoked_as_keeper() {
        panehost_host::keeper::main();
    }
    panehost_client::cli::main(panehost_client::cli::Entrypoints {
        run_host: |launch| {
            panehost_host::run(panehost_host::HostConfig {
                socket: launch.socket,
                state_dir: launch.state_dir,
                pane_limits: panehost_host::config::pane_limits_from_env()?,
                count_limits: panehost_host::config::count_limits_from_env()?,
                panes_per_keeper: panehost_host::config::panes_per_keeper_from_env()?,
                pane_cgroups: panehost_host::config::pane_cgroups_from_env()?,
                log_filter: launch.log_filter,
                runtimes_config: panehost_host::config::runtimes_config_from_env(),
            })
        },
        run_canary: panehost_host::canary::run,
        test_runtimes: || {
            let built_in = panehost_adapters::runtimes::built_in().into_iter();
            built_in.filter(|runtime| runtime.for_tests).map(|runtime| runtime.id).collect()
        },
    })
}
