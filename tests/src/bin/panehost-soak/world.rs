//! What every task of the run shares: the books, the pane book, the
//! host's life, the stop signal and the run's settings.

use crate::ledger::Ledger;
use crate::link::HostLife;
use crate::panes::PaneBook;
use std::time::Duration;
use tokio::sync::watch;

/// Settings the tasks read.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The run's seed.
    pub seed: u64,
    /// The longest pause between two operations of a client task.
    pub pace: Duration,
    /// The timeout of every `ask`.
    pub ask_timeout: Duration,
}

/// Shared by every task.
#[derive(Debug)]
pub struct World {
    /// The books.
    pub ledger: Ledger,
    /// What the program believes about its panes.
    pub book: PaneBook,
    /// The host's life.
    pub life: HostLife,
    /// The run's settings.
    pub settings: Settings,
    stop: watch::Sender<bool>,
}

impl World {
    /// A world for a run keeping `target` panes on the host at `life`.
    pub fn new(life: HostLife, target: usize, settings: Settings) -> World {
        World { ledger: Ledger::new(), book: PaneBook::new(target), life, settings, stop: watch::Sender::new(false) }
    }

    /// Tells every task to stop.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// True once the tasks were told to stop.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once the tasks are told to stop.
    pub async fn stopped(&self) {
        let mut stop = self.stop.subscribe();
        let _ = stop.wait_for(|stop| *stop).await;
    }

    /// Sleeps for `pause`, or less when the tasks are told to stop; true
    /// when they were.
    pub async fn pause(&self, pause: Duration) -> bool {
        tokio::select! {
            _ = tokio::time::sleep(pause) => self.stopping(),
            _ = self.stopped() => true,
        }
    }
}
