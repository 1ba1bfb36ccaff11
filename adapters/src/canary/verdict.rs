//! The canary's verdict, and how findings decide it.

use serde::Serialize;

/// What the canary concludes about a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The version was read and is at or above the floor, and the help
    /// lists every flag the adapter relies on; nothing was left unverified.
    Pass,
    /// As `Pass` for everything the help can show, with something the
    /// canary cannot verify offline: see [`Findings::unverified`].
    PassWithUnverified,
    /// The candidate breaks the adapter: a relied-on flag is missing, the
    /// version is below the floor, a probe crashed or timed out, or the
    /// package gives no executable of the runtime.
    Fail,
    /// Nothing could be judged: no sandbox (bubblewrap missing, or the
    /// kernel refused a namespace or a mount), or staging failed (no
    /// registry, no network, install scripts that need one).
    Blocked,
}

impl Verdict {
    /// The verdict's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::PassWithUnverified => "PASS_WITH_UNVERIFIED",
            Verdict::Fail => "FAIL",
            Verdict::Blocked => "BLOCKED",
        }
    }

    /// The exit code of `panehost canary`: 0, 3, 4 and 5.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::PassWithUnverified => 3,
            Verdict::Fail => 4,
            Verdict::Blocked => 5,
        }
    }

    /// How much the verdict asks of an operator, for picking the one that
    /// speaks for several: `Fail` above `Blocked` above
    /// `PassWithUnverified` above `Pass`.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::PassWithUnverified => 1,
            Verdict::Blocked => 2,
            Verdict::Fail => 3,
        }
    }
}

/// What a canary run found, in three kinds, each a sentence for people.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Findings {
    /// Why nothing could be judged.
    pub blocked: Vec<String>,
    /// What breaks the adapter.
    pub failures: Vec<String>,
    /// What the canary could not verify offline.
    pub unverified: Vec<String>,
}

impl Findings {
    /// `Blocked` when anything blocked the run, else `Fail` on any failure,
    /// else `PassWithUnverified` when anything is unverified, else `Pass`.
    pub fn verdict(&self) -> Verdict {
        if !self.blocked.is_empty() {
            Verdict::Blocked
        } else if !self.failures.is_empty() {
            Verdict::Fail
        } else if !self.unverified.is_empty() {
            Verdict::PassWithUnverified
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_outranks_failures_which_outrank_unverified() {
        let mut findings = Findings::default();
        assert_eq!(findings.verdict(), Verdict::Pass);
        findings.unverified.push("a variable".into());
        assert_eq!(findings.verdict(), Verdict::PassWithUnverified);
        findings.failures.push("a flag".into());
        assert_eq!(findings.verdict(), Verdict::Fail);
        findings.blocked.push("no namespace".into());
        assert_eq!(findings.verdict(), Verdict::Blocked);
        assert_eq!(serde_json::to_string(&Verdict::PassWithUnverified).unwrap(), "\"PASS_WITH_UNVERIFIED\"");
    }
}
