//! A completion receipt is bound to what runs, not only to the launcher on
//! `PATH`: a stand-in `kimi` laid out as pip lays out a PyPI CLI (a
//! launcher in `VENV/bin` that never changes, the distribution's
//! `kimi_cli-VERSION.dist-info/RECORD` in `VENV/lib/python3.13/site-packages`)
//! takes a receipt; reinstalling it with other files, and upgrading it in
//! place, each void the receipt, with the launcher byte-identical; the
//! upgrade to 1.52.0 also makes the version a refused one.

mod support;

use panehost_ipc::{Encoding, Receipt, Request, Response, RuntimeInfo, StartParams};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use support::*;

fn runtime(conn: &mut Connection, id: &str) -> RuntimeInfo {
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!("not runtimes") };
    runtimes.into_iter().find(|runtime| runtime.id == id).unwrap_or_else(|| panic!("{id} is not listed"))
}

fn probe(conn: &mut Connection) -> Receipt {
    let request = Request::ProbeRuntime { runtime: "kimi".into(), model: None, accept_weaker_boundary: true };
    match conn.ok(request) {
        Response::Receipt(receipt) => receipt,
        other => panic!("{other:?}"),
    }
}

/// The launcher: its version and its answers come from the installed
/// package (`kimi_cli/VERSION`), as a real launcher's come from the module
/// it imports; its own bytes depend only on where it is.
fn launcher(venv: &Path) -> String {
    format!(
        "#!/bin/sh\nsite='{}/lib/python3.13/site-packages'\n\
         [ \"$1\" = --version ] && {{ echo \"kimi, version $(cat \"$site/kimi_cli/VERSION\")\"; exit 0; }}\n\
         if [ \"$1\" = --quiet ] && [ \"$2\" = -p ]; then\n\
         nonce=$(printf '%s' \"$3\" | sed 's/.*\"panehost_receipt\":\"\\([0-9a-f]*\\)\".*/\\1/')\n\
         printf '{{\"panehost_receipt\":\"%s\"}}\\n' \"$nonce\"; exit 0; fi\n\
         echo \"kimi ran: [$*]\"; read line\n",
        venv.display()
    )
}

/// Installs `version` of the stand-in distribution: its module, and its
/// `dist-info` with a `RECORD` (the previous version's removed, as pip
/// does).
fn install(venv: &Path, version: &str, record: &str) {
    let site = venv.join("lib/python3.13/site-packages");
    if let Ok(entries) = std::fs::read_dir(&site) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("kimi_cli-") {
                std::fs::remove_dir_all(entry.path()).unwrap();
            }
        }
    }
    let dist_info = site.join(format!("kimi_cli-{version}.dist-info"));
    std::fs::create_dir_all(&dist_info).unwrap();
    std::fs::create_dir_all(site.join("kimi_cli")).unwrap();
    std::fs::write(site.join("kimi_cli/VERSION"), version).unwrap();
    std::fs::write(dist_info.join("RECORD"), record).unwrap();
}

fn make_venv(root: &Path) -> (PathBuf, PathBuf) {
    let venv = root.join("venv");
    let bin = venv.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let kimi = bin.join("kimi");
    std::fs::write(&kimi, launcher(&venv)).unwrap();
    std::fs::set_permissions(&kimi, std::fs::Permissions::from_mode(0o755)).unwrap();
    (venv, kimi)
}

#[test]
fn a_receipt_is_void_after_a_reinstall_or_an_upgrade_in_place_under_an_unchanged_launcher() {
    let root = tempfile::tempdir().unwrap();
    let (venv, kimi) = make_venv(root.path());
    install(&venv, "1.50.0", "kimi_cli/__init__.py,sha256=one,10\n");
    let launcher_bytes = std::fs::read(&kimi).unwrap();
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let host = TestHost::start_with_env(&[("PATH", &path)]);
    let mut conn = host.connect(Encoding::Json);

    let installed = runtime(&mut conn, "kimi");
    assert_eq!(installed.package.as_deref(), Some("pypi kimi-cli 1.50.0"), "{installed:?}");
    let receipt = probe(&mut conn);
    assert!(receipt.passed, "{receipt:?}");
    assert_eq!(receipt.fingerprint, installed.fingerprint, "{receipt:?}");
    let taken = runtime(&mut conn, "kimi");
    assert!(taken.receipt_valid, "{taken:?}");
    assert_eq!(taken.readiness, "ready", "{taken:?}");

    // Reinstalled with other files, same version: the RECORD differs.
    install(&venv, "1.50.0", "kimi_cli/__init__.py,sha256=two,10\n");
    let reinstalled = runtime(&mut conn, "kimi");
    assert!(!reinstalled.receipt_valid, "{reinstalled:?}");
    assert_eq!(reinstalled.sha256, installed.sha256, "the launcher is the same");
    assert_ne!(reinstalled.fingerprint, installed.fingerprint);
    assert_eq!(reinstalled.readiness_gate.as_deref(), Some("receipt"), "{reinstalled:?}");
    assert!(probe(&mut conn).passed);
    assert!(runtime(&mut conn, "kimi").receipt_valid);

    // Upgraded in place to 1.51.0. A start before anything listed the
    // runtimes again is refused: what would run is not what was identified.
    install(&venv, "1.51.0", "kimi_cli/__init__.py,sha256=three,10\n");
    assert_eq!(std::fs::read(&kimi).unwrap(), launcher_bytes, "pip leaves the launcher as it was");
    let start = Request::Start(StartParams { runtime: "kimi".into(), ..StartParams::default() });
    let changed = conn.call(start.clone()).unwrap_err();
    assert_eq!(changed.code, "BINARY_CHANGED", "{changed}");
    assert!(changed.message.contains("installed package changed"), "{changed}");
    let upgraded = runtime(&mut conn, "kimi");
    assert_eq!(upgraded.version.as_deref(), Some("kimi, version 1.51.0"), "detected again: {upgraded:?}");
    assert_eq!(upgraded.package.as_deref(), Some("pypi kimi-cli 1.51.0"));
    assert_eq!(upgraded.sha256, installed.sha256);
    assert!(!upgraded.receipt_valid, "{upgraded:?}");
    let reason = upgraded.readiness_reason.clone().unwrap();
    assert!(reason.contains("another executable") && reason.contains("pypi kimi-cli 1.51.0"), "{reason}");
    let Response::Started(pane) = conn.ok(start) else { panic!() };
    conn.ok(Request::Close { pane: pane.id });

    // Upgraded to the retirement release: void, and refused.
    install(&venv, "1.52.0", "kimi_cli/__init__.py,sha256=four,10\n");
    let retired = runtime(&mut conn, "kimi");
    assert!(!retired.receipt_valid, "{retired:?}");
    assert!(retired.version_refused.is_some(), "{retired:?}");
    assert_eq!(retired.readiness_gate.as_deref(), Some("version"), "{retired:?}");
    host.stop();
}

#[test]
fn a_receipt_stored_without_a_fingerprint_does_not_count() {
    let root = tempfile::tempdir().unwrap();
    let (venv, _kimi) = make_venv(root.path());
    install(&venv, "1.50.0", "r\n");
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let mut host = TestHost::start_with_env(&[("PATH", &path)]);
    let mut conn = host.connect(Encoding::Json);
    assert!(probe(&mut conn).passed);
    assert!(runtime(&mut conn, "kimi").receipt_valid);
    host.signal_and_wait("-TERM");
    // As an older host stored it: no fingerprint.
    let stored = host.state_dir.join("receipts/kimi.json");
    let mut receipt: serde_json::Value = serde_json::from_slice(&std::fs::read(&stored).unwrap()).unwrap();
    assert!(receipt["fingerprint"].is_string(), "{receipt}");
    receipt.as_object_mut().unwrap().remove("fingerprint");
    std::fs::write(&stored, serde_json::to_vec(&receipt).unwrap()).unwrap();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    let info = runtime(&mut conn, "kimi");
    assert!(!info.receipt_valid, "{info:?}");
    assert!(info.readiness_reason.unwrap().contains("older host"));
    host.stop();
}
