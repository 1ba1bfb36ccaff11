//! What a pane is, as the protocol sees it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An opaque pane id, unique within one host's state directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct PaneId(pub String);

impl PaneId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for PaneId {
    fn from(id: &str) -> Self {
        PaneId(id.to_owned())
    }
}

/// A terminal size in character cells, within [`Size::MIN`] and
/// [`Size::MAX_COLS`] x [`Size::MAX_ROWS`], and at most [`Size::MAX_CELLS`]
/// cells in all.
///
/// Every size a client sends becomes memory: the terminal model allocates
/// a grid of `cols x rows` cells (about 32 bytes each) for its main and its
/// alternate screen, and a screen snapshot must fit in one frame. The
/// bounds keep the largest pane's model at about 16 MiB. The smallest size
/// is 2x2 because the terminal model cannot place a wide character in one
/// column or scroll a one-row screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Size {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

/// A size outside the bounds of [`Size`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "size {size} is out of range: columns from {min_cols} to {max_cols}, rows from {min_rows} to {max_rows}, \
     at most {max_cells} cells",
    min_cols = Size::MIN.cols,
    max_cols = Size::MAX_COLS,
    min_rows = Size::MIN.rows,
    max_rows = Size::MAX_ROWS,
    max_cells = Size::MAX_CELLS
)]
pub struct SizeOutOfRange {
    /// The size that was refused.
    pub size: Size,
}

impl Size {
    /// The size a pane gets when a start request names none.
    pub const DEFAULT: Size = Size { cols: 80, rows: 24 };

    /// The smallest size a pane may have.
    pub const MIN: Size = Size { cols: 2, rows: 2 };

    /// The most columns a pane may have (tmux allows 10,000, but no real
    /// screen shows more than about 1,000 columns of readable text).
    pub const MAX_COLS: u16 = 1000;

    /// The most rows a pane may have.
    pub const MAX_ROWS: u16 = 1000;

    /// The most cells (columns times rows) a pane may have: 1000x250 or
    /// 500x500, more than an 8K display shows in a small font.
    pub const MAX_CELLS: u32 = 250_000;

    /// True when the size is within the bounds above.
    pub fn is_valid(self) -> bool {
        self.check().is_ok()
    }

    /// The nearest size within the bounds above: each dimension clamped,
    /// then the rows reduced until the cells fit. A terminal narrower or
    /// larger than a pane may be shows a pane of this size.
    pub fn clamped(self) -> Size {
        let cols = self.cols.clamp(Size::MIN.cols, Size::MAX_COLS);
        let rows = self.rows.clamp(Size::MIN.rows, Size::MAX_ROWS);
        let most_rows = (Size::MAX_CELLS / u32::from(cols)) as u16;
        Size { cols, rows: rows.min(most_rows) }
    }

    /// The size itself when it is within the bounds above.
    ///
    /// # Errors
    /// [`SizeOutOfRange`] naming the size and the bounds.
    pub fn check(self) -> Result<Size, SizeOutOfRange> {
        let within = (Size::MIN.cols..=Size::MAX_COLS).contains(&self.cols)
            && (Size::MIN.rows..=Size::MAX_ROWS).contains(&self.rows)
            && u32::from(self.cols) * u32::from(self.rows) <= Size::MAX_CELLS;
        if within {
            Ok(self)
        } else {
            Err(SizeOutOfRange { size: self })
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.cols, self.rows)
    }
}

/// How a pane's process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExitStatus {
    /// The exit code; by convention 128 + n for death by signal n.
    pub code: u32,
    /// The name of the signal that ended the process, if one did.
    #[serde(default)]
    pub signal: Option<String>,
}

/// Whether a pane's process still runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaneState {
    /// The process is running.
    Running,
    /// The process has exited; the pane keeps its output and screen until
    /// it is closed.
    Exited(ExitStatus),
}

/// How a pane came to this host ([`PaneSummary::restored_by`]). Travels as
/// a string.
pub mod restored_by {
    /// By a `start` or a `login`.
    pub const STARTED: &str = "started";
    /// After a host restart: the same process, taken back from its keeper.
    pub const KEEPER: &str = "keeper";
    /// After a host restart: a new process that resumed the session by its
    /// exact reference (the generation grew).
    pub const NATIVE_REFERENCE: &str = "native_reference";
    /// After a host restart: a new process that resumed the CLI's latest
    /// session (the generation grew).
    pub const PROVIDER_SELECTION: &str = "provider_selection";
    /// After a host restart: a new process, starting over, where the
    /// runtime declares `HOST_LOSS_RESTARTS_FRESH`.
    pub const FRESH: &str = "fresh";

    /// Every way: the known values of the `RestoredBy` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[STARTED, KEEPER, NATIVE_REFERENCE, PROVIDER_SELECTION, FRESH];
}

/// One pane, as `list` and `start` describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaneSummary {
    /// The pane's id.
    pub id: PaneId,
    /// The runtime it was started with, such as `shell`.
    pub runtime: String,
    /// Grows whenever the process behind the pane is replaced.
    pub generation: u64,
    /// Running or exited.
    pub state: PaneState,
    /// The process id of the pane's child (its process group leader).
    pub pid: u32,
    /// The terminal size.
    pub size: Size,
    /// The end offset: the total number of output bytes the pane has produced.
    pub offset: u64,
    /// The working directory the process started in.
    pub cwd: String,
    /// The window title the process set, or empty.
    pub title: String,
    /// When the pane was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// What its agent is doing: `idle`, `busy`, `awaiting_input`,
    /// `awaiting_approval` or `unknown` (see [`crate::turn::activity`]).
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::ActivitySchema")]
    pub activity: String,
    /// How the pane came to this host: `started` (by a `start` or `login`),
    /// or, after a host restart, `keeper` (the same process, taken back
    /// from its keeper), `native_reference` or `provider_selection` (a new
    /// process that resumed the session; the generation grew), or `fresh`
    /// (a new process, starting over, where the runtime declares
    /// `HOST_LOSS_RESTARTS_FRESH`).
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::RestoredBySchema")]
    pub restored_by: String,
    /// How the end of a turn is observed for this pane: `hook`,
    /// `notify_program`, `terminal_notification`, `screen_heuristic`,
    /// `unobserved` or `shell_integration` ([`crate::turn::completion`]).
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::CompletionSourceSchema")]
    pub completion: String,
    /// The labels the client started it with (revision 3).
    #[serde(default)]
    pub labels: crate::labels::Labels,
}

#[cfg(test)]
mod tests {
    use super::Size;

    #[test]
    fn sizes_are_bounded_on_every_side() {
        for valid in [Size::MIN, Size::DEFAULT, Size { cols: 1000, rows: 250 }, Size { cols: 500, rows: 500 }] {
            assert_eq!(valid.check(), Ok(valid));
        }
        for invalid in [
            Size { cols: 0, rows: 24 },
            Size { cols: 1, rows: 24 },
            Size { cols: 80, rows: 1 },
            Size { cols: 1001, rows: 2 },
            Size { cols: 2, rows: 1001 },
            Size { cols: 1000, rows: 251 },
            Size { cols: u16::MAX, rows: u16::MAX },
        ] {
            assert!(!invalid.is_valid(), "{invalid} should be refused");
        }
        for (cols, rows) in [(0, 0), (1, 1), (1, 500), (4000, 4000), (1000, 1000), (u16::MAX, 3)] {
            let size = Size { cols, rows }.clamped();
            assert!(size.is_valid(), "{cols}x{rows} became {size}");
        }
        assert_eq!(Size::DEFAULT.clamped(), Size::DEFAULT);
        assert_eq!(Size { cols: 1, rows: 1 }.clamped(), Size::MIN);
        assert_eq!(Size { cols: 1000, rows: 1000 }.clamped(), Size { cols: 1000, rows: 250 });
        assert_eq!(
            Size { cols: 1, rows: 5 }.check().unwrap_err().to_string(),
            "size 1x5 is out of range: columns from 2 to 1000, rows from 2 to 1000, at most 250000 cells"
        );
    }
}
