//! The server manager's gRPC contract, generated from
//! `proto/matchmaker/v1/server_manager.proto` at build time, and [`Credential`],
//! the interceptor that puts a caller's token on every call.

#[allow(clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("matchmaker.v1");
}

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// A server-manager client whose calls carry a [`Credential`].
pub type Client =
    v1::server_manager_client::ServerManagerClient<InterceptedService<Channel, Credential>>;

/// Sends `authorization: Bearer <token>` with every call (nothing in dev mode).
#[derive(Clone, Default)]
pub struct Credential(Option<MetadataValue<Ascii>>);

impl Credential {
    /// A fleet or allocator token (`None`: dev mode). Fails on a token that is not
    /// printable ASCII.
    pub fn new(token: Option<&str>) -> Result<Self, String> {
        match token.map(str::trim).filter(|t| !t.is_empty()) {
            None => Ok(Self(None)),
            Some(t) => format!("Bearer {t}")
                .parse()
                .map(|v| Self(Some(v)))
                .map_err(|_| "the token must be printable ASCII".to_string()),
        }
    }
}

impl Interceptor for Credential {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            request.metadata_mut().insert("authorization", v.clone());
        }
        Ok(request)
    }
}

/// A client of the server manager on `channel`, sending `credential`.
pub fn client(channel: Channel, credential: Credential) -> Client {
    v1::server_manager_client::ServerManagerClient::with_interceptor(channel, credential)
}
