//! The server: the listener, each connection with its frames and requests
//! in flight, dispatch, and the subscriptions a connection holds.

pub(crate) mod answer_budget;
pub(crate) mod connection;
pub(crate) mod daemon;
pub(crate) mod dispatch;
pub(crate) mod host_state;
pub(crate) mod outbox;
pub(crate) mod passed_descriptors;
pub(crate) mod peer_process;
pub(crate) mod peer_search_path;
pub(crate) mod subscription;
pub(crate) mod watch;
