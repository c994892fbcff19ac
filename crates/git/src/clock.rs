//! Wall-clock times as the git layer records them: milliseconds since the Unix epoch, the unit
//! of the landing journal and of lock-file ages.

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    millis_since_epoch(std::time::SystemTime::now())
}

/// `time` in milliseconds since the Unix epoch (0 before it).
pub(crate) fn millis_since_epoch(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
