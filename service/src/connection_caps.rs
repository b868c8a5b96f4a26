//! How many connections the daemon holds open, in total and from one peer address:
//! each accepted connection takes a slot, returned when it closes, and one beyond
//! either cap is closed at once. A client that opens connections and never speaks
//! can then hold at most its share, never every file descriptor of the daemon.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Default of the connections open at once (`--max-connections`): below the common soft limit of 1,024 open
/// files, leaving the daemon room for its keys, logs and metrics.
pub const DEFAULT_MAX_CONNECTIONS: usize = 768;
/// Default of the connections open at once from one address (`--max-connections-per-peer`).
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 128;

/// The caps, and the connections open now.
#[derive(Clone, Debug)]
pub struct ConnectionCaps {
    total: usize,
    per_peer: usize,
    open: Arc<Mutex<Open>>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// One open connection's place, given back when dropped.
#[derive(Debug)]
pub struct ConnectionSlot {
    peer: IpAddr,
    open: Arc<Mutex<Open>>,
}

impl ConnectionCaps {
    /// At most `total` connections open, at most `per_peer` of them from one address
    /// (an IPv4 address mapped into IPv6 counts as the IPv4 one).
    pub fn new(total: usize, per_peer: usize) -> ConnectionCaps {
        ConnectionCaps {
            total,
            per_peer,
            open: Arc::default(),
        }
    }

    /// A slot for a connection from `peer`, or why there is none.
    pub fn take(&self, peer: IpAddr) -> Result<ConnectionSlot, String> {
        let peer = peer.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.total >= self.total {
            return Err(format!(
                "{} connections are open, the limit --max-connections",
                open.total
            ));
        }
        let from_peer = open.by_peer.entry(peer).or_default();
        if *from_peer >= self.per_peer {
            return Err(format!(
                "{from_peer} connections from {peer} are open, the limit --max-connections-per-peer"
            ));
        }
        *from_peer += 1;
        open.total += 1;
        Ok(ConnectionSlot {
            peer,
            open: Arc::clone(&self.open),
        })
    }

    /// Connections open now: in total, and from `peer`.
    pub fn open(&self, peer: IpAddr) -> (usize, usize) {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let from_peer = open.by_peer.get(&peer.to_canonical()).copied();
        (open.total, from_peer.unwrap_or(0))
    }
}

impl ConnectionSlot {
    /// The peer's address.
    pub fn peer(&self) -> IpAddr {
        self.peer
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                open.by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_peer_and_all_together_are_capped_and_closed_slots_return() {
        let caps = ConnectionCaps::new(5, 3);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let mut from_a: Vec<_> = (0..2).map(|_| caps.take(a).unwrap()).collect();
        from_a.push(caps.take(mapped).unwrap());
        let refused = caps.take(a).unwrap_err();
        assert!(refused.contains("--max-connections-per-peer"), "{refused}");
        let from_b: Vec<_> = (0..2).map(|_| caps.take(b).unwrap()).collect();
        assert_eq!(caps.open(a), (5, 3));
        let refused = caps.take(b).unwrap_err();
        assert!(refused.contains("5 connections are open"), "{refused}");
        from_a.pop();
        assert_eq!(caps.open(mapped), (4, 2));
        let again = caps.take(b).unwrap();
        assert_eq!(again.peer(), b);
        drop((from_a, from_b, again));
        assert_eq!(caps.open(a), (0, 0));
    }
}
