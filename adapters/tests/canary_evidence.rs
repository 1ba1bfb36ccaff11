//! The canary's offline probes of the fifteen installable CLIs, kept in
//! `adapters/evidence/canary/` (rerun `adapters/evidence/canary.sh` to
//! record them again): each judged the binary that `capture.sh` recorded,
//! in a private network namespace, with the help commands and requirements
//! the adapters define today, and none failed.

use panehost_adapters::descriptor::{Descriptor, Evidence};
use panehost_adapters::relied_flags::{help_commands, requirements, self_update_switches};
use panehost_adapters::runtimes;
use serde_json::Value;
use std::path::PathBuf;

fn evidence(file: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evidence").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|item| item.as_str().unwrap().to_owned()).collect()
}

fn installable() -> Vec<Descriptor> {
    runtimes::built_in().into_iter().filter(|d| matches!(d.evidence, Evidence::CapturedHelp { .. })).collect()
}

#[test]
fn each_installable_cli_was_probed_offline_and_none_failed() {
    let descriptors = installable();
    assert_eq!(descriptors.len(), 15);
    for descriptor in descriptors {
        let id = descriptor.id.as_str();
        let report = evidence(&format!("canary/{id}.json"));
        let capture = evidence(&format!("{id}.json"));
        assert_eq!(report["runtime"], id);
        assert!(matches!(report["verdict"].as_str(), Some("PASS" | "PASS_WITH_UNVERIFIED")), "{id}: {report:#}");
        assert!(
            strings(&report["findings"]["failures"]).is_empty() && strings(&report["findings"]["blocked"]).is_empty()
        );
        assert!(report["network"].as_str().unwrap().starts_with("private network namespace"), "{id}");
        assert!(report["promotion"].as_str().unwrap().starts_with("not performed"), "{id}");
        // The binary the capture recorded, and the version it printed then.
        assert_eq!(report["candidate"]["sha256"], capture["sha256"], "{id}: not the captured binary");
        assert_eq!(report["version"]["printed"], capture["version"], "{id}");
        assert_eq!(report["version"]["floor_status"], "at_or_above", "{id}");
        // The version probe, then exactly the help commands the adapter relies on, each answered.
        let asked: Vec<Vec<String>> =
            report["probes"].as_array().unwrap().iter().map(|probe| strings(&probe["args"])).collect();
        let mut expected = vec![descriptor.version.args.clone()];
        expected.extend(help_commands(&descriptor));
        assert_eq!(asked, expected, "{id}: rerun adapters/evidence/canary.sh after changing what is asked");
        for probe in report["probes"].as_array().unwrap() {
            assert_eq!(probe["exit"], "exit status: 0", "{id}: {probe}");
        }
        assert_eq!(
            report["requirements"]["checked"].as_array().unwrap().len(),
            requirements(&descriptor).len(),
            "{id}"
        );
        assert!(report["requirements"]["missing"].as_array().unwrap().is_empty(), "{id}");
        let mut switches = strings(&report["self_update_switches"]["seen"]);
        switches.extend(strings(&report["self_update_switches"]["unseen"]));
        switches.sort();
        let mut declared = self_update_switches(&descriptor);
        declared.sort();
        assert_eq!(switches, declared, "{id}");
    }
}

#[test]
fn unverified_means_a_self_update_switch_the_help_cannot_show() {
    for descriptor in installable() {
        let report = evidence(&format!("canary/{}.json", descriptor.id));
        let unverified = strings(&report["findings"]["unverified"]);
        let unseen = strings(&report["self_update_switches"]["unseen"]);
        let expected = unseen.len() + usize::from(descriptor.self_update_off.note.is_some());
        assert_eq!(unverified.len(), expected, "{}: {unverified:?}", descriptor.id);
        assert_eq!(report["verdict"] == "PASS", unverified.is_empty(), "{}", descriptor.id);
    }
}
