//! Figures and how they are printed: one line each, panehost first, then
//! tmux and the raw PTY with panehost's ratio to each; or JSON.

use crate::stats::{median, ratios};
use serde_json::{json, Value};

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Throughput: more is better.
    Higher,
    /// Latency, memory, time: less is better.
    Lower,
}

/// One system's side of a figure, compared with panehost.
#[derive(Debug, Clone)]
pub struct Side {
    /// The figure for this system (the median over rounds).
    pub value: f64,
    /// panehost's figure divided by this one: the median of the per-round
    /// ratios when there are rounds.
    pub ratio: f64,
    /// This system's figure in each round.
    pub rounds: Vec<f64>,
    /// panehost's ratio to it in each round.
    pub round_ratios: Vec<f64>,
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Such as `drain/1-client`.
    pub name: String,
    /// Such as `MB/s`.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// panehost's figure (the median over rounds).
    pub panehost: f64,
    /// panehost's figure in each round.
    pub panehost_rounds: Vec<f64>,
    /// tmux, when it has a counterpart.
    pub tmux: Option<Side>,
    /// The raw PTY, when it has a counterpart.
    pub raw: Option<Side>,
    /// What else a reader should know (resyncs, what tmux did instead).
    pub notes: Vec<String>,
}

impl Figure {
    /// A figure from per-round values: each value is the median of its
    /// rounds, each ratio the median of the per-round ratios.
    pub fn from_rounds(
        name: &str,
        unit: &str,
        better: Better,
        panehost: Vec<f64>,
        tmux: Option<Vec<f64>>,
        raw: Option<Vec<f64>>,
    ) -> Figure {
        let side = |other: Vec<f64>| {
            let round_ratios = ratios(&panehost, &other);
            Side { value: median(&other), ratio: median(&round_ratios), rounds: other, round_ratios }
        };
        Figure {
            name: name.to_owned(),
            unit: unit.to_owned(),
            better,
            panehost: median(&panehost),
            tmux: tmux.map(side),
            raw: raw.map(side),
            panehost_rounds: panehost,
            notes: Vec::new(),
        }
    }

    /// A figure measured once.
    pub fn single(
        name: &str,
        unit: &str,
        better: Better,
        panehost: f64,
        tmux: Option<f64>,
        raw: Option<f64>,
    ) -> Figure {
        Figure::from_rounds(name, unit, better, vec![panehost], tmux.map(|v| vec![v]), raw.map(|v| vec![v]))
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Figure {
        self.notes.push(note.into());
        self
    }

    /// The figure as one line of text, then its per-round ratios and notes
    /// on indented lines.
    pub fn to_text(&self) -> String {
        let mut line = format!("{:<26} panehost {:>8} {}", self.name, number(self.panehost), self.unit);
        for (label, side) in [("tmux", &self.tmux), ("raw", &self.raw)] {
            match side {
                Some(side) => {
                    line += &format!("  {label} {} {} ({}x)", number(side.value), self.unit, ratio(side.ratio))
                }
                None => line += &format!("  {label} n/a"),
            }
        }
        if self.panehost_rounds.len() > 1 {
            let mut rounds = format!("\n{:<26} panehost per round: {}", "", list(&self.panehost_rounds, number));
            for (label, side) in [("tmux", &self.tmux), ("raw", &self.raw)] {
                if let Some(side) = side {
                    rounds += &format!("; ratio to {label}: {}", list(&side.round_ratios, ratio));
                }
            }
            line += &rounds;
        }
        for note in &self.notes {
            line += &format!("\n{:<26} {note}", "");
        }
        line
    }

    /// The figure as a JSON object.
    pub fn to_json(&self) -> Value {
        let side = |side: &Option<Side>| match side {
            Some(side) => json!({
                "value": finite(side.value),
                "ratio": finite(side.ratio),
                "rounds": side.rounds.iter().map(|v| finite(*v)).collect::<Vec<_>>(),
                "round_ratios": side.round_ratios.iter().map(|v| finite(*v)).collect::<Vec<_>>(),
            }),
            None => Value::Null,
        };
        json!({
            "name": self.name,
            "unit": self.unit,
            "better": match self.better { Better::Higher => "higher", Better::Lower => "lower" },
            "panehost": finite(self.panehost),
            "panehost_rounds": self.panehost_rounds.iter().map(|v| finite(*v)).collect::<Vec<_>>(),
            "tmux": side(&self.tmux),
            "raw": side(&self.raw),
            "notes": self.notes,
        })
    }
}

fn finite(value: f64) -> Value {
    if value.is_finite() {
        json!(value)
    } else {
        Value::Null
    }
}

/// A figure with three significant digits or so.
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        "n/a".to_owned()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn ratio(value: f64) -> String {
    if !value.is_finite() {
        "n/a".to_owned()
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else if value.abs() >= 0.1 || value == 0.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

fn list(values: &[f64], format: fn(f64) -> String) -> String {
    values.iter().map(|v| format(*v)).collect::<Vec<_>>().join(" ")
}
