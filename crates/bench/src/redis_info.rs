//! What Redis says about its own work: CPU time (`INFO cpu`) and time per command
//! (`INFO commandstats`), so benches can report Redis cost per operation.

use anyhow::Result;

/// Total microseconds per command from `INFO commandstats`.
pub async fn command_usec(
    admin: &mut redis::aio::MultiplexedConnection,
) -> Result<Vec<(String, f64)>> {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(admin)
        .await?;
    Ok(stats
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let usec = rest
                .split("usec=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<f64>()
                .ok()?;
            Some((name.to_string(), usec))
        })
        .filter(|(name, _)| !matches!(name.as_str(), "info" | "config"))
        .collect())
}

/// Redis's own CPU time (user + sys) in microseconds, from `INFO cpu`.
pub async fn redis_cpu_usec(admin: &mut redis::aio::MultiplexedConnection) -> Result<f64> {
    let info: String = redis::cmd("INFO").arg("cpu").query_async(admin).await?;
    Ok(info
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k, "used_cpu_user" | "used_cpu_sys").then(|| v.trim().parse::<f64>().ok())?
        })
        .sum::<f64>()
        * 1e6)
}
