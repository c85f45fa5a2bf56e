//! Which address a request comes from, for the per-address rate limits.
//!
//! By default it is the TCP peer's. Behind a load balancer that would make every
//! player share the balancer's budget, so `TRUSTED_PROXIES` lists the proxies'
//! networks: from a peer in them (and only then) the client is read from
//! `X-Forwarded-For`, else `Forwarded` (RFC 7239 `for=`): walking the list from
//! the right, the first address that is not itself a trusted proxy. A header
//! from anyone else is ignored, since anyone can write one. An entry that is
//! not an address (`unknown`, an obfuscated name) ends the walk at the last
//! trusted hop, which then stands for the client.

use axum::http::HeaderMap;
use ipnet::IpNet;
use std::net::IpAddr;

/// The networks of the proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Vec<IpNet>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an address or network (e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8)")]
pub struct BadNetwork(String);

impl std::str::FromStr for TrustedProxies {
    type Err = BadNetwork;

    /// A comma-separated list of networks (CIDR) or addresses; empty: none.
    fn from_str(s: &str) -> Result<Self, BadNetwork> {
        let nets = s
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.parse::<IpNet>()
                    .or_else(|_| n.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| BadNetwork(n.to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { nets })
    }
}

impl TrustedProxies {
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    fn trusted(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.nets.iter().any(|n| n.contains(&ip))
    }

    /// The client address of a request from `peer` with `headers`.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusted(peer) {
            return peer;
        }
        let hops = forwarded_for(headers);
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop {
                Some(ip) if self.trusted(*ip) => client = *ip,
                Some(ip) => return *ip,
                None => break,
            }
        }
        client
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) as the IPv4 one.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The hops the proxies recorded, oldest first: `X-Forwarded-For` if present,
/// else the `for` parameters of `Forwarded`. `None` for an entry that is not an
/// address.
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_string())
            .collect()
    };
    let xff = values("x-forwarded-for");
    if !xff.is_empty() {
        return xff.iter().map(|v| address(v)).collect();
    }
    values("forwarded")
        .iter()
        .map(|element| {
            element
                .split(';')
                .find_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    k.trim().eq_ignore_ascii_case("for").then(|| v.trim())
                })
                .and_then(address)
        })
        .collect()
}

/// An address as proxies write it: bare, `"quoted"`, with a port
/// (`192.0.2.1:4711`), or IPv6 in brackets (`[2001:db8::1]:4711`).
fn address(raw: &str) -> Option<IpAddr> {
    let v = raw.trim().trim_matches('"');
    if let Ok(ip) = v.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok().map(canonical);
    }
    let (host, port) = v.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse().ok().map(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn headers_count_only_from_a_trusted_peer() {
        let proxies: TrustedProxies = "10.0.0.0/8, 192.0.2.7".parse().unwrap();
        let h = headers(&[("x-forwarded-for", "203.0.113.5")]);
        assert_eq!(proxies.client(ip("10.1.2.3"), &h), ip("203.0.113.5"));
        assert_eq!(proxies.client(ip("192.0.2.7"), &h), ip("203.0.113.5"));
        // Anyone else's header is theirs to write, so it is ignored.
        assert_eq!(proxies.client(ip("198.51.100.1"), &h), ip("198.51.100.1"));
        assert_eq!(
            TrustedProxies::default().client(ip("10.1.2.3"), &h),
            ip("10.1.2.3")
        );
    }

    #[test]
    fn the_rightmost_address_that_is_not_a_proxy_is_the_client() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client wrote a lie first; the proxies appended what they saw.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.5, 10.0.0.2")]);
        assert_eq!(proxies.client(ip("10.0.0.1"), &h), ip("203.0.113.5"));
        // Two header lines read as one list.
        let h = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(proxies.client(ip("10.0.0.1"), &h), ip("203.0.113.9"));
        // Only proxies: the oldest of them.
        let h = headers(&[("x-forwarded-for", "10.9.9.9, 10.0.0.2")]);
        assert_eq!(proxies.client(ip("10.0.0.1"), &h), ip("10.9.9.9"));
        // Garbage stops the walk at the last trusted hop.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, nonsense, 10.0.0.2")]);
        assert_eq!(proxies.client(ip("10.0.0.1"), &h), ip("10.0.0.2"));
    }

    #[test]
    fn forwarded_is_read_when_x_forwarded_for_is_absent() {
        let proxies: TrustedProxies = "10.0.0.0/8,fd00::/8".parse().unwrap();
        let h = headers(&[(
            "forwarded",
            r#"for=1.2.3.4, for="[2001:db8:cafe::17]:4711";proto=https, For=10.0.0.3:80"#,
        )]);
        assert_eq!(proxies.client(ip("fd00::1"), &h), ip("2001:db8:cafe::17"));
        let h = headers(&[("forwarded", "for=unknown;by=10.0.0.9")]);
        assert_eq!(proxies.client(ip("10.0.0.1"), &h), ip("10.0.0.1"));
        // IPv4 mapped into IPv6 is the IPv4 address.
        let h = headers(&[("x-forwarded-for", "::ffff:203.0.113.5")]);
        assert_eq!(proxies.client(ip("::ffff:10.0.0.1"), &h), ip("203.0.113.5"));
    }

    #[test]
    fn the_list_parses_networks_and_addresses() {
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
        assert!("10.0.0.0/8,::1".parse::<TrustedProxies>().is_ok());
        let e = "10.0.0.0/8, lb.internal"
            .parse::<TrustedProxies>()
            .unwrap_err();
        assert!(e.to_string().contains("lb.internal"));
    }
}
