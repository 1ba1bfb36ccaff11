//! Every input fuzzing found (and the inputs of the bugs that started the
//! campaign), replayed through its target's check on the stable toolchain:
//! `fuzz/regressions/<target>/<input>`. Adding a file here is how a crash
//! becomes a test.

use std::path::Path;

#[test]
fn every_regression_input_passes_its_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut replayed = 0;
    for (target, check) in panehost_fuzz::TARGETS {
        let dir = root.join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let input = std::fs::read(entry.path()).unwrap();
            let name = entry.path().display().to_string();
            let outcome = std::panic::catch_unwind(|| check(&input));
            assert!(outcome.is_ok(), "{name} fails its check again");
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no regression input under {}", root.display());
}

#[test]
fn every_target_has_a_folder_of_regression_inputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    for (target, _) in panehost_fuzz::TARGETS {
        assert!(root.join(target).is_dir(), "fuzz/regressions/{target} is missing");
    }
}

/// Every target is built (`fuzz/targets/Cargo.toml`), run by a campaign
/// on its defaults (`fuzz/campaign`), and smoke-run by CI (`.ci/run`), but
/// `vt100_at_pane_sizes`, which looks for vt100's own panics.
#[test]
fn every_target_is_built_run_by_a_campaign_and_by_ci() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let manifest = read(&fuzz.join("targets").join("Cargo.toml"));
    let campaign = read(&fuzz.join("campaign"));
    let ci = read(&fuzz.join("..").join(".ci").join("run"));
    let defaults = campaign
        .lines()
        .find(|line| line.trim_start().starts_with("targets=(") && !line.contains("()"))
        .expect("the defaults");
    let smoke =
        ci.lines().skip_while(|line| !line.contains("fuzz/campaign --seconds")).take(3).collect::<Vec<_>>().join("\n");
    let named = |text: &str, target: &str| {
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|word| word == target)
    };
    for (target, _) in panehost_fuzz::TARGETS {
        assert!(manifest.contains(&format!("name = \"{target}\"")), "fuzz/targets/Cargo.toml builds no {target}");
        assert!(named(defaults, target), "fuzz/campaign does not run {target} on its defaults");
        if *target != "vt100_at_pane_sizes" {
            assert!(named(&smoke, target), ".ci/run does not smoke-run {target}");
        }
    }
}

#[test]
fn the_vt100_panics_the_host_contains_are_real() {
    // Each input of `vt100_at_pane_sizes` makes the vt100 model itself
    // panic (when a vt100 release fixes one, this says so, and the input
    // can go); the test above shows the host's model survives it.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions").join("vt100_at_pane_sizes");
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let input = std::fs::read(entry.path()).unwrap();
        if std::panic::catch_unwind(|| panehost_fuzz::vt100_at_pane_sizes(&input)).is_err() {
            found += 1;
        } else {
            eprintln!("{} no longer makes vt100 panic", entry.path().display());
        }
    }
    std::panic::set_hook(previous);
    assert!(found > 0, "no input of {} makes vt100 panic", dir.display());
}
