//! Errors a store can return.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(redis::RedisError),
    /// A pool leader's write refused: its fencing token is stale, a later leader
    /// took the pool (see [`crate::Leading`]).
    #[error("fenced off: {0}")]
    Fenced(String),
    /// A plain worker's claim refused: a pool leader (`COORDINATION=leader`) holds
    /// the pool, and the pool is its alone (see [`crate::Store::claim`]).
    #[error("led: {0}")]
    Led(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("timed out talking to the store")]
    Timeout,
    #[error("written, but {acked} of {wanted} replicas confirmed it in time")]
    NotReplicated { acked: u32, wanted: u32 },
}

impl From<redis::RedisError> for StoreError {
    fn from(e: redis::RedisError) -> Self {
        if e.code() == Some("FENCED") {
            return StoreError::Fenced(e.detail().unwrap_or("stale fencing token").to_string());
        }
        if e.code() == Some("LED") {
            return StoreError::Led(e.detail().unwrap_or("the pool has a leader").to_string());
        }
        StoreError::Redis(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}
