//! A key load that can be called off: by evicting the key while it loads, by the
//! client that asked for it going away (its deadline passed, it disconnected) or by
//! the daemon's shutdown. A load runs in phases (admission, reading or generating the
//! key, starting its engine, which stages it on the devices); it checks its ticket
//! between them, a key's setup checks it every few thousand points too, and a
//! `.zkey`'s read between the 64 MiB blocks it reads. Once called off, the load stops
//! there, writes nothing to the key cache and frees what it holds.

use std::sync::{Arc, Mutex};

use crate::error::{ServiceError, ServiceResult};

/// Shared by a loading key's slot and the load itself.
#[derive(Clone, Default)]
pub struct LoadTicket {
    why: Arc<Mutex<Option<String>>>,
}

impl LoadTicket {
    /// Calls the load off for `why` (the first reason given is kept).
    pub fn call_off(&self, why: &str) {
        let mut slot = self.why.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(why.to_string());
        }
    }

    /// Why the load was called off, if it was.
    pub fn called_off(&self) -> Option<String> {
        self.why.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the load was called off.
    pub fn is_called_off(&self) -> bool {
        self.called_off().is_some()
    }

    /// The error of a load of `key` stopped while `phase` for why it was called off.
    pub fn stopped_while(&self, key: &str, phase: &str) -> ServiceError {
        let why = self.called_off().unwrap_or_default();
        ServiceError::Cancelled(format!("loading key `{key}` stopped while {phase}: {why}"))
    }

    /// `Ok` unless the load was called off, then [`ServiceError::Cancelled`] saying
    /// which phase it stopped before and why.
    pub fn check(&self, key_id: &str, next_phase: &str) -> ServiceResult<()> {
        match self.called_off() {
            None => Ok(()),
            Some(why) => Err(ServiceError::Cancelled(format!(
                "loading key `{key_id}` stopped before {next_phase}: {why}"
            ))),
        }
    }

    /// A guard that calls the load off with `why` when dropped, unless
    /// [`disarmed`](CallOffOnDrop::disarm) first: held by the request that asked for
    /// the load, whose future is dropped when its client goes away.
    pub fn call_off_on_drop(&self, why: &'static str) -> CallOffOnDrop {
        CallOffOnDrop {
            ticket: Some(self.clone()),
            why,
        }
    }
}

/// See [`LoadTicket::call_off_on_drop`].
pub struct CallOffOnDrop {
    ticket: Option<LoadTicket>,
    why: &'static str,
}

impl CallOffOnDrop {
    /// The request saw its load to the end: dropping the guard no longer calls it off.
    pub fn disarm(mut self) {
        self.ticket = None;
    }
}

impl Drop for CallOffOnDrop {
    fn drop(&mut self) {
        if let Some(ticket) = &self.ticket {
            ticket.call_off(self.why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_is_kept_and_named_with_the_phase() {
        let ticket = LoadTicket::default();
        assert!(ticket.check("k", "staging").is_ok());
        ticket.call_off("evicted while loading");
        ticket.call_off("the daemon is shutting down");
        let err = ticket.check("k", "staging").unwrap_err().to_string();
        assert_eq!(
            err,
            "loading key `k` stopped before staging: evicted while loading"
        );
    }

    #[test]
    fn a_dropped_guard_calls_off_and_a_disarmed_one_does_not() {
        let ticket = LoadTicket::default();
        ticket.call_off_on_drop("the client went away").disarm();
        assert_eq!(ticket.called_off(), None);
        drop(ticket.call_off_on_drop("the client went away"));
        assert_eq!(ticket.called_off().as_deref(), Some("the client went away"));
    }
}
