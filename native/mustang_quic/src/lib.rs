//! Mustang's QUIC engine: quinn-proto (sans-IO QUIC) in a NIF.
//!
//! This crate holds QUIC only: endpoint and connection state, packet
//! protection, the TLS 1.3 handshake (rustls with ring), loss recovery,
//! congestion and flow control, stream reassembly. It has no socket, no
//! thread and no clock: Erlang passes datagrams and the time in (monotonic
//! microseconds), takes datagrams and the next deadline out, and does all of
//! HTTP/3. The interface is described in doc/internals/http3.md ("The QUIC
//! NIF").
//!
//! Objects are NIF resources, each touched by one Erlang process:
//! - an endpoint (`EndpointRes`), by the endpoint process that owns the UDP
//!   socket: it routes datagrams to connections by connection ID;
//! - a connection (`ConnRes`), by its connection process;
//! - events between the two (`ConnEventRes`, `EndpointEventRes`), carried in
//!   Erlang messages. No lock is shared between processes.
//!
//! quinn-proto reuses connection handles after a connection is drained;
//! Erlang sees a key (`u64`) the endpoint never reuses instead.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto as qp;
use rustler::{Atom, Binary, Encoder, Env, NifResult, OwnedBinary, ResourceArc, Term};

mod atoms {
    rustler::atoms! {
        ok, error, undefined, infinity, fin, nofin, bidi, uni,
        conn, incoming, send, connected, lost, stream, data, reset, stopped,
        flushed, endpoint_event, drained, datagram, opened, queued,
        timed_out, locally_closed, version_mismatch, cids_exhausted,
        application_closed, connection_closed, transport_error,
        event, timeout, write, stop, allow, open_uni, close, max_streams,
        pkcs8, pkcs1, sec1, badarg, true_ = "true", false_ = "false",
        cert_chain, key, alpn, idle_timeout, max_bidi_streams, max_uni_streams,
        stream_receive_window, receive_window, send_window, retry,
        initial_read, max_datagrams, datagram_receive_buffer, migration,
        max_incoming, verify, stale, refused,
        rtt, cwnd, lost_packets, sent_packets, remote, handshaking,
        sent_bytes, recv_bytes, open_connections,
    }
}

/// Erlang's monotonic clock (microseconds) mapped onto `Instant`: quinn-proto
/// counts in `Instant`s, and an `Instant` can only be made by adding to
/// another. The origin is taken when the endpoint is made, with the Erlang
/// time of that moment.
#[derive(Clone, Copy)]
struct Clock {
    origin: Instant,
    origin_us: i64,
}

impl Clock {
    fn new(now_us: i64) -> Self {
        Clock { origin: Instant::now(), origin_us: now_us }
    }
    fn at(&self, us: i64) -> Instant {
        if us <= self.origin_us {
            self.origin
        } else {
            self.origin + Duration::from_micros((us - self.origin_us) as u64)
        }
    }
    fn us(&self, t: Instant) -> i64 {
        self.origin_us + t.saturating_duration_since(self.origin).as_micros() as i64
    }
}

// ---------------------------------------------------------------------------
// Resources

pub struct EndpointRes {
    inner: Mutex<EndpointState>,
}

struct EndpointState {
    ep: qp::Endpoint,
    clock: Clock,
    /// The handle of each live connection, to the key Erlang knows it by.
    keys: HashMap<qp::ConnectionHandle, u64>,
    next_key: u64,
    /// Address validation with Retry for clients not yet validated.
    retry: bool,
    conn_opts: ConnOpts,
    client_config: Option<qp::ClientConfig>,
    buf: Vec<u8>,
}

#[derive(Clone, Copy)]
struct ConnOpts {
    /// Bytes of each bidirectional stream read before Erlang allows more
    /// (`{allow, Id, N}`); unidirectional streams are read as they come.
    initial_read: u64,
    /// Datagrams built per conn_step call at most (bounded work per call).
    max_datagrams: usize,
}

#[rustler::resource_impl]
impl rustler::Resource for EndpointRes {}

pub struct IncomingRes {
    inner: Mutex<Option<qp::Incoming>>,
    /// The size of the datagram that opened it (for the amplification limit).
    size: u64,
    endpoint: ResourceArc<EndpointRes>,
}

#[rustler::resource_impl]
impl rustler::Resource for IncomingRes {}

impl Drop for IncomingRes {
    /// An incoming connection neither accepted nor refused holds a buffer in
    /// the endpoint until it is ignored.
    fn drop(&mut self) {
        let inc = self.inner.get_mut().ok().and_then(|i| i.take());
        if let Some(inc) = inc {
            if let Ok(mut st) = self.endpoint.inner.lock() {
                st.ep.ignore(inc);
            }
        }
    }
}

pub struct ConnEventRes {
    inner: Mutex<Option<qp::ConnectionEvent>>,
}

#[rustler::resource_impl]
impl rustler::Resource for ConnEventRes {}

pub struct EndpointEventRes {
    inner: Mutex<Option<(qp::ConnectionHandle, qp::EndpointEvent)>>,
}

#[rustler::resource_impl]
impl rustler::Resource for EndpointEventRes {}

pub struct ConnRes {
    inner: Mutex<ConnState>,
}

#[rustler::resource_impl]
impl rustler::Resource for ConnRes {}

struct ConnState {
    conn: qp::Connection,
    handle: qp::ConnectionHandle,
    clock: Clock,
    opts: ConnOpts,
    /// Data written by Erlang that quinn-proto could not take yet (stream
    /// flow control, send window), with the fin to send after it.
    sendq: HashMap<qp::StreamId, SendQ>,
    /// Bytes each bidirectional stream may still be read for.
    quota: HashMap<qp::StreamId, u64>,
    buf: Vec<u8>,
    connected_sent: bool,
    /// Bytes handed out while the handshake is not done (the client's
    /// address may not be validated yet): see amplification_ok.
    handshake_sent: u64,
    /// The size of the client's first datagram (quinn-proto's statistics
    /// leave it out), or None when the address was validated by Retry.
    first_datagram: Option<u64>,
}

#[derive(Default)]
struct SendQ {
    chunks: Vec<Bytes>,
    size: usize,
    fin: bool,
}

// ---------------------------------------------------------------------------
// Term helpers

fn bad<T>() -> NifResult<T> {
    Err(rustler::Error::BadArg)
}

fn map_get<'a>(map: Term<'a>, key: Atom) -> Option<Term<'a>> {
    map.map_get(key.encode(map.get_env())).ok()
}

fn opt_u64(map: Term, key: Atom, default: u64) -> NifResult<u64> {
    match map_get(map, key) {
        None => Ok(default),
        Some(t) => t.decode::<u64>(),
    }
}

fn opt_bool(map: Term, key: Atom, default: bool) -> NifResult<bool> {
    match map_get(map, key) {
        None => Ok(default),
        Some(t) => t.decode::<bool>(),
    }
}

fn decode_addr(t: Term) -> NifResult<SocketAddr> {
    let (ip, port): (Term, u16) = t.decode()?;
    let tuple = rustler::types::tuple::get_tuple(ip)?;
    let ip = match tuple.len() {
        4 => {
            let v: Vec<u8> = tuple.iter().map(|x| x.decode::<u8>()).collect::<NifResult<_>>()?;
            IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3]))
        }
        8 => {
            let v: Vec<u16> = tuple.iter().map(|x| x.decode::<u16>()).collect::<NifResult<_>>()?;
            IpAddr::V6(Ipv6Addr::new(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]))
        }
        _ => return bad(),
    };
    Ok(SocketAddr::new(ip, port))
}

fn encode_addr<'a>(env: Env<'a>, a: &SocketAddr) -> Term<'a> {
    let ip = match a.ip() {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (o[0], o[1], o[2], o[3]).encode(env)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let ts: Vec<Term> = s.iter().map(|x| x.encode(env)).collect();
            rustler::types::tuple::make_tuple(env, &ts)
        }
    };
    (ip, a.port()).encode(env)
}

fn bin<'a>(env: Env<'a>, data: &[u8]) -> Term<'a> {
    let mut ob = OwnedBinary::new(data.len()).expect("binary allocation");
    ob.as_mut_slice().copy_from_slice(data);
    ob.release(env).encode(env)
}

fn time_term<'a>(env: Env<'a>, clock: &Clock, t: Option<Instant>) -> Term<'a> {
    match t {
        None => atoms::infinity().encode(env),
        Some(t) => clock.us(t).encode(env),
    }
}

// ---------------------------------------------------------------------------
// Configuration

fn transport_config(opts: Term) -> NifResult<qp::TransportConfig> {
    let mut tc = qp::TransportConfig::default();
    let idle = opts_idle(opts)?;
    tc.max_idle_timeout(idle);
    tc.max_concurrent_bidi_streams(varint(opt_u64(opts, atoms::max_bidi_streams(), 100)?)?);
    tc.max_concurrent_uni_streams(varint(opt_u64(opts, atoms::max_uni_streams(), 3)?)?);
    tc.stream_receive_window(varint(opt_u64(opts, atoms::stream_receive_window(), 1_250_000)?)?);
    tc.receive_window(varint(opt_u64(opts, atoms::receive_window(), 15_000_000)?)?);
    tc.send_window(opt_u64(opts, atoms::send_window(), 15_000_000)?);
    let dgram = opt_u64(opts, atoms::datagram_receive_buffer(), 0)?;
    tc.datagram_receive_buffer_size(if dgram == 0 { None } else { Some(dgram as usize) });
    Ok(tc)
}

fn opts_idle(opts: Term) -> NifResult<Option<qp::IdleTimeout>> {
    match opt_u64(opts, atoms::idle_timeout(), 30_000)? {
        0 => Ok(None),
        ms => Ok(Some(qp::IdleTimeout::try_from(Duration::from_millis(ms)).map_err(|_| rustler::Error::BadArg)?)),
    }
}

fn varint(v: u64) -> NifResult<qp::VarInt> {
    qp::VarInt::from_u64(v).map_err(|_| rustler::Error::BadArg)
}

fn alpn(opts: Term) -> NifResult<Vec<Vec<u8>>> {
    match map_get(opts, atoms::alpn()) {
        None => Ok(vec![b"h3".to_vec()]),
        Some(t) => {
            let l: Vec<Binary> = t.decode()?;
            Ok(l.iter().map(|b| b.as_slice().to_vec()).collect())
        }
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(opts: Term) -> Result<Arc<qp::ServerConfig>, String> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer};
    let chain: Vec<Binary> = map_get(opts, atoms::cert_chain())
        .ok_or("cert_chain missing")?
        .decode()
        .map_err(|_| "cert_chain: not a list of binaries")?;
    let chain: Vec<CertificateDer<'static>> =
        chain.iter().map(|b| CertificateDer::from(b.as_slice().to_vec())).collect();
    let (kind, der): (Atom, Binary) = map_get(opts, atoms::key())
        .ok_or("key missing")?
        .decode()
        .map_err(|_| "key: not {Type, Der}")?;
    let der = der.as_slice().to_vec();
    let key: PrivateKeyDer<'static> = if kind == atoms::pkcs8() {
        PrivatePkcs8KeyDer::from(der).into()
    } else if kind == atoms::pkcs1() {
        PrivatePkcs1KeyDer::from(der).into()
    } else if kind == atoms::sec1() {
        PrivateSec1KeyDer::from(der).into()
    } else {
        return Err("key: type is not pkcs8, pkcs1 or sec1".into());
    };
    let mut tls = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = alpn(opts).map_err(|_| "alpn: not a list of binaries")?;
    // No 0-RTT: early data can be replayed, and HTTP/3 requests in it would
    // need replay rules of their own (RFC 9114 10.9).
    tls.max_early_data_size = 0;
    let crypto = qp::crypto::rustls::QuicServerConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut sc = qp::ServerConfig::with_crypto(Arc::new(crypto));
    sc.transport_config(Arc::new(transport_config(opts).map_err(|_| "bad transport option")?));
    sc.migration(opt_bool(opts, atoms::migration(), true).map_err(|_| "migration")?);
    let max_incoming = opt_u64(opts, atoms::max_incoming(), 1 << 16).map_err(|_| "max_incoming")?;
    sc.max_incoming(max_incoming as usize);
    Ok(Arc::new(sc))
}

/// Client side (tests and tools): no certificate check unless verify is
/// true, which then needs roots this crate does not have; tests only.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn client_config(opts: Term) -> Result<qp::ClientConfig, String> {
    let p = provider();
    let mut tls = rustls::ClientConfig::builder_with_provider(p.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoVerify(p)))
        .with_no_client_auth();
    tls.alpn_protocols = alpn(opts).map_err(|_| "alpn")?;
    let crypto = qp::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut cc = qp::ClientConfig::new(Arc::new(crypto));
    cc.transport_config(Arc::new(transport_config(opts).map_err(|_| "bad transport option")?));
    Ok(cc)
}

fn conn_opts(opts: Term) -> NifResult<ConnOpts> {
    Ok(ConnOpts {
        initial_read: opt_u64(opts, atoms::initial_read(), 65536)?,
        max_datagrams: opt_u64(opts, atoms::max_datagrams(), 64)?.max(1) as usize,
    })
}

// ---------------------------------------------------------------------------
// Endpoint NIFs

/// endpoint_new(Opts, NowUs) -> {ok, Endpoint} | {error, Reason}.
/// A server endpoint when Opts has cert_chain and key, else a client one.
#[rustler::nif]
fn endpoint_new<'a>(env: Env<'a>, opts: Term<'a>, now_us: i64) -> NifResult<Term<'a>> {
    let server = if map_get(opts, atoms::cert_chain()).is_some() {
        match server_config(opts) {
            Ok(sc) => Some(sc),
            Err(e) => return Ok((atoms::error(), e).encode(env)),
        }
    } else {
        None
    };
    let client_config = if server.is_none() {
        match client_config(opts) {
            Ok(cc) => Some(cc),
            Err(e) => return Ok((atoms::error(), e).encode(env)),
        }
    } else {
        None
    };
    let ep = qp::Endpoint::new(Arc::new(qp::EndpointConfig::default()), server, true, None);
    let st = EndpointState {
        ep,
        clock: Clock::new(now_us),
        keys: HashMap::new(),
        next_key: 1,
        retry: opt_bool(opts, atoms::retry(), false)?,
        conn_opts: conn_opts(opts)?,
        client_config,
        buf: Vec::new(),
    };
    let res = ResourceArc::new(EndpointRes { inner: Mutex::new(st) });
    Ok((atoms::ok(), res).encode(env))
}

/// endpoint_set_config(Endpoint, Opts) -> ok | {error, Reason}: a new
/// certificate or new transport settings, for connections accepted from now.
#[rustler::nif]
fn endpoint_set_config<'a>(env: Env<'a>, res: ResourceArc<EndpointRes>, opts: Term<'a>) -> NifResult<Term<'a>> {
    match server_config(opts) {
        Ok(sc) => {
            let mut st = res.inner.lock().unwrap();
            st.ep.set_server_config(Some(sc));
            st.retry = opt_bool(opts, atoms::retry(), st.retry)?;
            st.conn_opts = conn_opts(opts)?;
            Ok(atoms::ok().encode(env))
        }
        Err(e) => Ok((atoms::error(), e).encode(env)),
    }
}

/// endpoint_handle(Endpoint, NowUs, {IP, Port}, Datagram) ->
///   ok | {conn, Key, ConnEvent} | {incoming, Incoming} | {send, Datagram}.
/// Cheap (a header parse and a lookup); new connections are accepted with
/// endpoint_accept/3. With retry on, an Initial from an address not yet
/// validated is answered with Retry here.
#[rustler::nif]
fn endpoint_handle<'a>(
    env: Env<'a>,
    res: ResourceArc<EndpointRes>,
    now_us: i64,
    addr: Term<'a>,
    data: Binary<'a>,
) -> NifResult<Term<'a>> {
    let remote = decode_addr(addr)?;
    let mut guard = res.inner.lock().unwrap();
    let st = &mut *guard;
    let now = st.clock.at(now_us);
    st.buf.clear();
    let ev = st.ep.handle(now, remote, None, None, BytesMut::from(data.as_slice()), &mut st.buf);
    match ev {
        None => Ok(atoms::ok().encode(env)),
        Some(qp::DatagramEvent::ConnectionEvent(ch, ce)) => match st.keys.get(&ch) {
            Some(key) => {
                let ev = ResourceArc::new(ConnEventRes { inner: Mutex::new(Some(ce)) });
                Ok((atoms::conn(), *key, ev).encode(env))
            }
            None => Ok(atoms::ok().encode(env)),
        },
        Some(qp::DatagramEvent::Response(t)) => Ok((atoms::send(), bin(env, &st.buf[..t.size])).encode(env)),
        Some(qp::DatagramEvent::NewConnection(inc)) => {
            if st.retry && !inc.remote_address_validated() && inc.may_retry() {
                st.buf.clear();
                match st.ep.retry(inc, &mut st.buf) {
                    Ok(t) => Ok((atoms::send(), bin(env, &st.buf[..t.size])).encode(env)),
                    Err(e) => {
                        st.ep.ignore(e.into_incoming());
                        Ok(atoms::ok().encode(env))
                    }
                }
            } else {
                drop(guard);
                let inc = ResourceArc::new(IncomingRes {
                    inner: Mutex::new(Some(inc)),
                    size: data.len() as u64,
                    endpoint: res.clone(),
                });
                Ok((atoms::incoming(), inc).encode(env))
            }
        }
    }
}

/// endpoint_accept(Endpoint, Incoming, NowUs) -> {ok, Key, Conn, {IP, Port}}
///   | {error, Reason, Datagram | undefined}.
/// Runs the server's first TLS flight (ClientHello in, ServerHello,
/// certificate and its signature out): up to a millisecond, so it runs on a
/// dirty CPU scheduler.
#[rustler::nif(schedule = "DirtyCpu")]
fn endpoint_accept<'a>(
    env: Env<'a>,
    res: ResourceArc<EndpointRes>,
    inc: ResourceArc<IncomingRes>,
    now_us: i64,
) -> NifResult<Term<'a>> {
    let incoming = match inc.inner.lock().unwrap().take() {
        Some(i) => i,
        None => return bad(),
    };
    let remote = incoming.remote_address();
    // A Retry token proves the address (RFC 9000 8.1.2): no limit then.
    let first = if incoming.remote_address_validated() { None } else { Some(inc.size) };
    let mut guard = res.inner.lock().unwrap();
    let st = &mut *guard;
    let now = st.clock.at(now_us);
    st.buf.clear();
    match st.ep.accept(incoming, now, &mut st.buf, None) {
        Ok((ch, conn)) => {
            let key = st.next_key;
            st.next_key += 1;
            st.keys.insert(ch, key);
            let mut cs = ConnState::new(conn, ch, st.clock, st.conn_opts);
            cs.first_datagram = first;
            let c = ResourceArc::new(ConnRes { inner: Mutex::new(cs) });
            Ok((atoms::ok(), key, c, encode_addr(env, &remote)).encode(env))
        }
        Err(e) => {
            let reason = format!("{}", e.cause);
            let out = match e.response {
                Some(t) => bin(env, &st.buf[..t.size]),
                None => atoms::undefined().encode(env),
            };
            Ok((atoms::error(), reason, out).encode(env))
        }
    }
}

/// endpoint_refuse(Endpoint, Incoming) -> Datagram: CONNECTION_REFUSED
/// (max_connections reached, listener suspended or draining).
#[rustler::nif]
fn endpoint_refuse<'a>(env: Env<'a>, res: ResourceArc<EndpointRes>, inc: ResourceArc<IncomingRes>) -> NifResult<Term<'a>> {
    let incoming = match inc.inner.lock().unwrap().take() {
        Some(i) => i,
        None => return bad(),
    };
    let mut guard = res.inner.lock().unwrap();
    let st = &mut *guard;
    st.buf.clear();
    let t = st.ep.refuse(incoming, &mut st.buf);
    Ok(bin(env, &st.buf[..t.size]))
}

/// endpoint_event(Endpoint, EndpointEvent) -> ok | {conn, Key, ConnEvent}:
/// an event a connection produced (conn_step's {endpoint_event, E}); the
/// answer, if any, goes back to that connection.
#[rustler::nif]
fn endpoint_event<'a>(env: Env<'a>, res: ResourceArc<EndpointRes>, ev: ResourceArc<EndpointEventRes>) -> NifResult<Term<'a>> {
    let (ch, e) = match ev.inner.lock().unwrap().take() {
        Some(x) => x,
        None => return bad(),
    };
    let mut st = res.inner.lock().unwrap();
    let drained = e.is_drained();
    if !st.keys.contains_key(&ch) {
        return Ok(atoms::ok().encode(env));
    }
    let back = st.ep.handle_event(ch, e);
    let key = if drained { st.keys.remove(&ch) } else { st.keys.get(&ch).copied() };
    match (back, key) {
        (Some(ce), Some(key)) => {
            let ev = ResourceArc::new(ConnEventRes { inner: Mutex::new(Some(ce)) });
            Ok((atoms::conn(), key, ev).encode(env))
        }
        _ => Ok(atoms::ok().encode(env)),
    }
}

/// endpoint_forget(Endpoint, Key) -> ok: the connection's process ended
/// without the connection draining; the endpoint drops it (its connection
/// IDs route nowhere from now on).
#[rustler::nif]
fn endpoint_forget<'a>(env: Env<'a>, res: ResourceArc<EndpointRes>, key: u64) -> NifResult<Term<'a>> {
    let mut st = res.inner.lock().unwrap();
    let ch = st.keys.iter().find(|(_, k)| **k == key).map(|(ch, _)| *ch);
    if let Some(ch) = ch {
        st.keys.remove(&ch);
        let _ = st.ep.handle_event(ch, qp::EndpointEvent::drained());
    }
    Ok(atoms::ok().encode(env))
}

/// endpoint_connect(Endpoint, NowUs, {IP, Port}, ServerName) ->
///   {ok, Key, Conn} | {error, Reason}. Client endpoints only (tests).
#[rustler::nif]
fn endpoint_connect<'a>(
    env: Env<'a>,
    res: ResourceArc<EndpointRes>,
    now_us: i64,
    addr: Term<'a>,
    server_name: String,
) -> NifResult<Term<'a>> {
    let remote = decode_addr(addr)?;
    let mut guard = res.inner.lock().unwrap();
    let st = &mut *guard;
    let cc = match &st.client_config {
        Some(cc) => cc.clone(),
        None => return Ok((atoms::error(), "not a client endpoint").encode(env)),
    };
    let now = st.clock.at(now_us);
    match st.ep.connect(now, cc, remote, &server_name) {
        Ok((ch, conn)) => {
            let key = st.next_key;
            st.next_key += 1;
            st.keys.insert(ch, key);
            let cs = ConnState::new(conn, ch, st.clock, st.conn_opts);
            let c = ResourceArc::new(ConnRes { inner: Mutex::new(cs) });
            Ok((atoms::ok(), key, c).encode(env))
        }
        Err(e) => Ok((atoms::error(), e.to_string()).encode(env)),
    }
}

/// endpoint_info(Endpoint) -> #{open_connections => N}.
#[rustler::nif]
fn endpoint_info<'a>(env: Env<'a>, res: ResourceArc<EndpointRes>) -> NifResult<Term<'a>> {
    let st = res.inner.lock().unwrap();
    let m = Term::map_new(env).map_put(atoms::open_connections().encode(env), st.keys.len().encode(env))?;
    Ok(m)
}

// ---------------------------------------------------------------------------
// Connection NIFs

impl ConnState {
    fn new(conn: qp::Connection, handle: qp::ConnectionHandle, clock: Clock, opts: ConnOpts) -> Self {
        ConnState {
            conn,
            handle,
            clock,
            opts,
            sendq: HashMap::new(),
            quota: HashMap::new(),
            buf: Vec::with_capacity(1500 * 8),
            connected_sent: false,
            handshake_sent: 0,
            first_datagram: None,
        }
    }
}

fn stream_id(t: Term) -> NifResult<qp::StreamId> {
    let id: u64 = t.decode()?;
    Ok(qp::StreamId::from(varint(id)?))
}

fn sid(id: qp::StreamId) -> u64 {
    qp::VarInt::from(id).into_inner()
}

struct Step<'a> {
    env: Env<'a>,
    events: Vec<Term<'a>>,
    results: Vec<Term<'a>>,
    /// Streams whose send queue emptied during the step.
    flushed: Vec<qp::StreamId>,
}

/// conn_step(Conn, NowUs, Ops) -> {Results, Datagrams, Events, Timeout, More}.
///
/// Ops, applied in order: {event, ConnEvent} (a datagram or an endpoint
/// answer), timeout, {write, Id, IoData, Fin}, {reset, Id, Code},
/// {stop, Id, Code}, {allow, Id, Bytes}, {open_uni, Tag}, {close, Code,
/// Reason}, {max_streams, bidi | uni, N}, {datagram, Data}.
/// Then the connection is polled: events out, streams read, queued data
/// written, datagrams built (at most max_datagrams: More is true when more
/// are ready and the caller should step again soon).
///
/// Results: {opened, Tag, Id | undefined} per open_uni, {queued, Id, Bytes}
/// per write that could not all be handed to QUIC yet.
/// Datagrams: [{{IP, Port}, Datagram}]. Timeout: the next deadline
/// (monotonic µs, for a timeout op), or infinity.
/// Events: connected, {stream, Id, bidi | uni}, {data, Id, Bin, fin | nofin},
/// {reset, Id, Code}, {stopped, Id, Code}, {flushed, Id}, {datagram, Bin},
/// {lost, Reason}, {endpoint_event, E} (for the endpoint process), drained.
#[rustler::nif]
fn conn_step<'a>(env: Env<'a>, res: ResourceArc<ConnRes>, now_us: i64, ops: Vec<Term<'a>>) -> NifResult<Term<'a>> {
    let mut guard = res.inner.lock().unwrap();
    let cs = &mut *guard;
    let now = cs.clock.at(now_us);
    let mut step = Step { env, events: Vec::new(), results: Vec::new(), flushed: Vec::new() };
    for op in ops {
        apply_op(cs, &mut step, now, op)?;
    }
    poll_events(cs, &mut step, now);
    let mut endpoint_events = Vec::new();
    while let Some(e) = cs.conn.poll_endpoint_events() {
        let drained = e.is_drained();
        let r = ResourceArc::new(EndpointEventRes { inner: Mutex::new(Some((cs.handle, e))) });
        endpoint_events.push((atoms::endpoint_event(), r).encode(env));
        if drained {
            endpoint_events.push(atoms::drained().encode(env));
        }
    }
    // Datagrams, bounded per call.
    let mut out = Vec::new();
    let mut count = 0usize;
    let mut more = false;
    loop {
        if count >= cs.opts.max_datagrams {
            more = true;
            break;
        }
        cs.buf.clear();
        let left = cs.opts.max_datagrams - count;
        match cs.conn.poll_transmit(now, left, &mut cs.buf) {
            None => break,
            Some(t) => {
                let mut ob = OwnedBinary::new(t.size).expect("binary allocation");
                ob.as_mut_slice().copy_from_slice(&cs.buf[..t.size]);
                let b = ob.release(env);
                let dest = encode_addr(env, &t.destination);
                let seg = t.segment_size.unwrap_or(t.size);
                let mut off = 0;
                while off < t.size {
                    let len = seg.min(t.size - off);
                    if amplification_ok(cs, len) {
                        out.push((dest, b.make_subbinary(off, len)?).encode(env));
                    }
                    off += len;
                    count += 1;
                }
            }
        }
    }
    for id in step.flushed.drain(..) {
        step.events.push((atoms::flushed(), sid(id)).encode(env));
    }
    step.events.extend(endpoint_events);
    let timeout = time_term(env, &cs.clock, cs.conn.poll_timeout());
    Ok((step.results, out, step.events, timeout, more).encode(env))
}

/// RFC 9000 8.1: before the client's address is validated a server sends at
/// most three times the bytes it received. quinn-proto lets one more full
/// datagram go once any budget is left (quinn-rs/quinn#1082: 3822 bytes
/// for a 1200-byte Initial, measured 2026-11-27); a datagram past the limit
/// is dropped here instead, as the network would drop it (QUIC sends it
/// again once the handshake moves on). The handshake's end stands for the
/// validation (it needs the client's Handshake packets): stricter than the
/// RFC only between the two.
fn amplification_ok(cs: &mut ConnState, len: usize) -> bool {
    let first = match cs.first_datagram {
        Some(n) if cs.conn.is_handshaking() => n,
        _ => return true,
    };
    let received = cs.conn.stats().udp_rx.bytes + first;
    if cs.handshake_sent + len as u64 > 3 * received {
        return false;
    }
    cs.handshake_sent += len as u64;
    true
}

fn apply_op<'a>(cs: &mut ConnState, step: &mut Step<'a>, now: Instant, op: Term<'a>) -> NifResult<()> {
    let env = step.env;
    if op.is_atom() {
        if op.decode::<Atom>()? == atoms::timeout() {
            cs.conn.handle_timeout(now);
            return Ok(());
        }
        return bad();
    }
    let t = rustler::types::tuple::get_tuple(op)?;
    let tag: Atom = t[0].decode()?;
    if tag == atoms::event() && t.len() == 2 {
        let ev: ResourceArc<ConnEventRes> = t[1].decode()?;
        let ce = ev.inner.lock().unwrap().take();
        if let Some(ce) = ce {
            cs.conn.handle_event(ce);
        }
    } else if tag == atoms::write() && t.len() == 4 {
        let id = stream_id(t[1])?;
        let data = Binary::from_iolist(t[2])?;
        let fin: bool = t[3].decode()?;
        let pending = write_stream(cs, id, data.as_slice(), fin);
        if pending > 0 {
            step.results.push((atoms::queued(), sid(id), pending).encode(env));
        }
    } else if tag == atoms::reset() && t.len() == 3 {
        let id = stream_id(t[1])?;
        let code: u64 = t[2].decode()?;
        cs.sendq.remove(&id);
        let _ = cs.conn.send_stream(id).reset(varint(code)?);
    } else if tag == atoms::stop() && t.len() == 3 {
        let id = stream_id(t[1])?;
        let code: u64 = t[2].decode()?;
        cs.quota.remove(&id);
        let _ = cs.conn.recv_stream(id).stop(varint(code)?);
    } else if tag == atoms::allow() && t.len() == 3 {
        let id = stream_id(t[1])?;
        let n: u64 = t[2].decode()?;
        if let Some(q) = cs.quota.get_mut(&id) {
            *q = q.saturating_add(n);
            read_stream(cs, step, id);
        }
    } else if tag == atoms::open_uni() && t.len() == 2 {
        match cs.conn.streams().open(qp::Dir::Uni) {
            Some(id) => step.results.push((atoms::opened(), t[1], sid(id)).encode(env)),
            None => step.results.push((atoms::opened(), t[1], atoms::undefined()).encode(env)),
        }
    } else if tag == atoms::close() && t.len() == 3 {
        let code: u64 = t[1].decode()?;
        let reason: Binary = t[2].decode()?;
        cs.conn.close(now, varint(code)?, Bytes::copy_from_slice(reason.as_slice()));
    } else if tag == atoms::max_streams() && t.len() == 3 {
        let dir: Atom = t[1].decode()?;
        let n: u64 = t[2].decode()?;
        let dir = if dir == atoms::bidi() { qp::Dir::Bi } else { qp::Dir::Uni };
        cs.conn.set_max_concurrent_streams(dir, varint(n)?);
    } else if tag == atoms::datagram() && t.len() == 2 {
        let data = Binary::from_iolist(t[1])?;
        let _ = cs.conn.datagrams().send(Bytes::copy_from_slice(data.as_slice()), true);
    } else {
        return bad();
    }
    Ok(())
}

/// Hands data to QUIC, keeping what it cannot take yet; returns the bytes
/// still queued for the stream.
fn write_stream(cs: &mut ConnState, id: qp::StreamId, data: &[u8], fin: bool) -> usize {
    let q = cs.sendq.entry(id).or_default();
    if q.size == 0 {
        let mut s = cs.conn.send_stream(id);
        let n = match s.write(data) {
            Ok(n) => n,
            Err(qp::WriteError::Blocked) => 0,
            Err(_) => {
                cs.sendq.remove(&id);
                return 0;
            }
        };
        if n == data.len() {
            if fin {
                let _ = s.finish();
            }
            cs.sendq.remove(&id);
            return 0;
        }
        let q = cs.sendq.get_mut(&id).unwrap();
        q.chunks.push(Bytes::copy_from_slice(&data[n..]));
        q.size += data.len() - n;
        q.fin = fin;
        q.size
    } else {
        if !data.is_empty() {
            q.chunks.push(Bytes::copy_from_slice(data));
            q.size += data.len();
        }
        q.fin = q.fin || fin;
        q.size
    }
}

/// Writes what a stream has queued; true when the queue emptied.
fn flush_stream(cs: &mut ConnState, id: qp::StreamId) -> bool {
    let q = match cs.sendq.get_mut(&id) {
        Some(q) => q,
        None => return false,
    };
    let mut s = cs.conn.send_stream(id);
    match s.write_chunks(&mut q.chunks) {
        Ok(w) => {
            q.size -= w.bytes;
            q.chunks.drain(..w.chunks);
        }
        Err(qp::WriteError::Blocked) => {}
        Err(_) => {
            cs.sendq.remove(&id);
            return true;
        }
    }
    if q.size == 0 {
        if q.fin {
            let _ = s.finish();
        }
        cs.sendq.remove(&id);
        true
    } else {
        false
    }
}

/// Reads a stream within its quota (unidirectional streams: no quota).
fn read_stream<'a>(cs: &mut ConnState, step: &mut Step<'a>, id: qp::StreamId) {
    let env = step.env;
    let bounded = id.dir() == qp::Dir::Bi;
    let mut quota = if bounded { *cs.quota.get(&id).unwrap_or(&0) } else { u64::MAX };
    let mut parts: Vec<Bytes> = Vec::new();
    let mut fin = false;
    let mut reset_code = None;
    {
        let mut rs = cs.conn.recv_stream(id);
        let mut chunks = match rs.read(true) {
            Ok(c) => c,
            Err(_) => return,
        };
        loop {
            if quota == 0 {
                break;
            }
            match chunks.next(quota.min(usize::MAX as u64) as usize) {
                Ok(Some(c)) => {
                    quota -= c.bytes.len() as u64;
                    parts.push(c.bytes);
                }
                Ok(None) => {
                    fin = true;
                    break;
                }
                Err(qp::ReadError::Blocked) => break,
                Err(qp::ReadError::Reset(code)) => {
                    reset_code = Some(code.into_inner());
                    break;
                }
            }
        }
        let _ = chunks.finalize();
    }
    if bounded {
        if fin || reset_code.is_some() {
            cs.quota.remove(&id);
        } else {
            cs.quota.insert(id, quota);
        }
    }
    if !parts.is_empty() || fin {
        let size: usize = parts.iter().map(|p| p.len()).sum();
        let mut ob = OwnedBinary::new(size).expect("binary allocation");
        let mut off = 0;
        for p in &parts {
            ob.as_mut_slice()[off..off + p.len()].copy_from_slice(p);
            off += p.len();
        }
        let isfin = if fin { atoms::fin() } else { atoms::nofin() };
        step.events.push((atoms::data(), sid(id), ob.release(env), isfin).encode(env));
    }
    if let Some(code) = reset_code {
        step.events.push((atoms::reset(), sid(id), code).encode(env));
    }
}

fn poll_events<'a>(cs: &mut ConnState, step: &mut Step<'a>, now: Instant) {
    let env = step.env;
    let _ = now;
    while let Some(ev) = cs.conn.poll() {
        match ev {
            qp::Event::HandshakeDataReady => {}
            qp::Event::Connected => {
                if !cs.connected_sent {
                    cs.connected_sent = true;
                    step.events.push(atoms::connected().encode(env));
                }
            }
            qp::Event::ConnectionLost { reason } => {
                step.events.push((atoms::lost(), lost_reason(env, &reason)).encode(env));
            }
            qp::Event::Stream(qp::StreamEvent::Opened { dir }) => {
                while let Some(id) = cs.conn.streams().accept(dir) {
                    let d = if dir == qp::Dir::Bi { atoms::bidi() } else { atoms::uni() };
                    step.events.push((atoms::stream(), sid(id), d).encode(env));
                    if dir == qp::Dir::Bi {
                        cs.quota.insert(id, cs.opts.initial_read);
                    }
                    read_stream(cs, step, id);
                }
            }
            qp::Event::Stream(qp::StreamEvent::Readable { id }) => read_stream(cs, step, id),
            qp::Event::Stream(qp::StreamEvent::Writable { id }) => {
                if flush_stream(cs, id) {
                    step.flushed.push(id);
                }
            }
            qp::Event::Stream(qp::StreamEvent::Stopped { id, error_code }) => {
                cs.sendq.remove(&id);
                step.events.push((atoms::stopped(), sid(id), error_code.into_inner()).encode(env));
            }
            qp::Event::Stream(qp::StreamEvent::Finished { .. }) => {}
            qp::Event::Stream(qp::StreamEvent::Available { .. }) => {}
            qp::Event::DatagramReceived => {
                while let Some(d) = cs.conn.datagrams().recv() {
                    step.events.push((atoms::datagram(), bin(env, &d)).encode(env));
                }
            }
            qp::Event::DatagramsUnblocked => {}
        }
    }
    // A client endpoint's own streams are never "opened" by the peer: their
    // reads follow Readable events, with the same quota rule.
}

fn lost_reason<'a>(env: Env<'a>, r: &qp::ConnectionError) -> Term<'a> {
    use qp::ConnectionError as E;
    match r {
        E::VersionMismatch => atoms::version_mismatch().encode(env),
        E::TransportError(e) => (atoms::transport_error(), u64::from(e.code), e.reason.clone()).encode(env),
        E::ConnectionClosed(c) => {
            (atoms::connection_closed(), u64::from(c.error_code), bin(env, &c.reason)).encode(env)
        }
        E::ApplicationClosed(c) => {
            (atoms::application_closed(), c.error_code.into_inner(), bin(env, &c.reason)).encode(env)
        }
        E::Reset => atoms::reset().encode(env),
        E::TimedOut => atoms::timed_out().encode(env),
        E::LocallyClosed => atoms::locally_closed().encode(env),
        E::CidsExhausted => atoms::cids_exhausted().encode(env),
    }
}

/// conn_open_bidi(Conn) -> Id | undefined (clients: a request stream).
#[rustler::nif]
fn conn_open_bidi<'a>(env: Env<'a>, res: ResourceArc<ConnRes>) -> NifResult<Term<'a>> {
    let mut cs = res.inner.lock().unwrap();
    match cs.conn.streams().open(qp::Dir::Bi) {
        Some(id) => {
            let q = cs.opts.initial_read;
            cs.quota.insert(id, q);
            Ok(sid(id).encode(env))
        }
        None => Ok(atoms::undefined().encode(env)),
    }
}

/// conn_info(Conn) -> map: remote, rtt (µs), cwnd, sent_packets,
/// lost_packets, sent_bytes, recv_bytes, handshaking.
#[rustler::nif]
fn conn_info<'a>(env: Env<'a>, res: ResourceArc<ConnRes>) -> NifResult<Term<'a>> {
    let cs = res.inner.lock().unwrap();
    let stats = cs.conn.stats();
    let m = Term::map_new(env)
        .map_put(atoms::remote().encode(env), encode_addr(env, &cs.conn.remote_address()))?
        .map_put(atoms::rtt().encode(env), (cs.conn.rtt().as_micros() as u64).encode(env))?
        .map_put(atoms::cwnd().encode(env), stats.path.cwnd.encode(env))?
        .map_put(atoms::sent_packets().encode(env), stats.path.sent_packets.encode(env))?
        .map_put(atoms::lost_packets().encode(env), stats.path.lost_packets.encode(env))?
        .map_put(atoms::sent_bytes().encode(env), stats.udp_tx.bytes.encode(env))?
        .map_put(atoms::recv_bytes().encode(env), stats.udp_rx.bytes.encode(env))?
        .map_put(atoms::handshaking().encode(env), cs.conn.is_handshaking().encode(env))?;
    Ok(m)
}

rustler::init!("mustang_quic");
