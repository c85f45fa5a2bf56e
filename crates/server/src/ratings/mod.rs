//! Ratings in the running service: the consumer that turns results into ratings
//! ([`consumer`]) and the lookup the ingress queues tickets with ([`lookup`]).

pub mod consumer;
pub mod lookup;

pub use consumer::{ConsumerConfig, policies};
pub use lookup::Lookup;
