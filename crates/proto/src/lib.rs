//! The server manager's gRPC contract, generated from
//! `proto/matchmaker/v1/server_manager.proto` at build time.

#[allow(clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("matchmaker.v1");
}
