//! One JSON request to the local API with nothing to set up: the agents' hook starts for every
//! tool call, and reqwest's client (TLS roots, pool, proxy detection) costs more to build than
//! the whole request takes. Plain HTTP/1.1 through hyper's client connection, over the engine's
//! Unix socket where it has one, else its loopback port.

use crate::ClientError;
use crate::discovery;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;
use tokio::io::{AsyncRead, AsyncWrite};

/// POSTs `body` to `path` of the engine that owns `data_dir`: nothing is sent unless
/// [`discovery::find`] found that engine running.
pub async fn post<T: DeserializeOwned>(
    data_dir: &Path,
    path: &str,
    body: &Value,
) -> Result<T, ClientError> {
    let (endpoint, token) = discovery::find(data_dir)?;
    let unreachable = |message: String, refused: bool| ClientError::Unreachable {
        data_dir: data_dir.to_path_buf(),
        message,
        refused,
    };
    let request = |host: String| {
        hyper::Request::post(path)
            .header(hyper::header::HOST, host)
            .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| ClientError::Decode(e.to_string()))
    };
    #[cfg(unix)]
    if let Some(socket) = endpoint.socket.as_deref() {
        let stream = tokio::net::UnixStream::connect(socket)
            .await
            .map_err(|e| unreachable(e.to_string(), true))?;
        let answer = exchange(stream, request("localhost".into())?)
            .await
            .map_err(|e| unreachable(e.to_string(), false))?;
        return decode(answer);
    }
    let stream = tokio::net::TcpStream::connect(endpoint.addr)
        .await
        .map_err(|e| unreachable(e.to_string(), true))?;
    let _ = stream.set_nodelay(true);
    let answer = exchange(stream, request(endpoint.addr.to_string())?)
        .await
        .map_err(|e| unreachable(e.to_string(), false))?;
    decode(answer)
}

/// The engine's JSON answer: its value, or its refusal.
fn decode<T: DeserializeOwned>(
    (status, bytes): (hyper::StatusCode, Bytes),
) -> Result<T, ClientError> {
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))?;
    crate::client::answer(status.as_u16(), value)
}

/// One request on a fresh connection: the status and the whole body.
async fn exchange<S>(
    stream: S,
    request: hyper::Request<Full<Bytes>>,
) -> Result<(hyper::StatusCode, Bytes), hyper::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    let connection = tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    let status = response.status();
    let bytes = response.into_body().collect().await?.to_bytes();
    connection.abort();
    Ok((status, bytes))
}
