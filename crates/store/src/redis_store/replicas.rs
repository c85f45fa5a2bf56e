//! What a Redis primary says of its replicas (`INFO replication`), read at
//! start-up by a process that waits for replicas on every ticket.

use crate::StoreError;

/// One primary and the replicas connected to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisPrimary {
    /// host:port, as the client reaches it.
    pub address: String,
    /// `connected_slaves`: replicas attached now (a replica still syncing counts).
    pub replicas: u32,
}

impl RedisPrimary {
    /// Reads `INFO replication` text. A node that is itself a replica is refused:
    /// a write there fails anyway, and `WAIT` means nothing.
    pub(super) fn parse(address: String, info: &str) -> Result<Self, StoreError> {
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
        };
        match field("role") {
            Some("master") => {}
            other => {
                return Err(StoreError::Corrupt(format!(
                    "{address} is not a primary (role {})",
                    other.unwrap_or("unknown")
                )));
            }
        }
        let replicas = field("connected_slaves")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "{address}: no connected_slaves in INFO replication"
                ))
            })?;
        Ok(Self { address, replicas })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_primary_with_one_replica() {
        let text = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\
                    slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n";
        let p = RedisPrimary::parse("127.0.0.1:7000".into(), text).unwrap();
        assert_eq!(p.replicas, 1);
        assert_eq!(p.address, "127.0.0.1:7000");
    }

    #[test]
    fn refuses_a_replica_and_text_without_the_count() {
        let replica = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n";
        assert!(RedisPrimary::parse("a:1".into(), replica).is_err());
        assert!(RedisPrimary::parse("a:1".into(), "role:master\r\n").is_err());
    }
}
