//! Errors a store can return.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("timed out talking to the store")]
    Timeout,
    #[error("written, but {acked} of {wanted} replicas confirmed it in time")]
    NotReplicated { acked: u32, wanted: u32 },
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}
