//! The debug log: off unless `NVCC_WRAPPER_LOG` holds a tracing filter (`debug`, `nvcc_wrapper=trace`). Lines go to
//! stderr as `nvcc-wrapper[LEVEL]: message`, never to stdout, which belongs to nvcc.

use std::fmt;

use tracing::{Event, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use super::{vars, Context};
use crate::error::Result;

pub fn init(ctx: &Context) -> Result<()> {
    let Some(filter) = ctx.env.non_empty(vars::LOG) else {
        return Ok(());
    };
    // tracing reads `debug ` (a space after it) as a target named so, which logs nothing: the directives are given
    // to it as `is_filter` read them, blanks trimmed.
    let filter = filter
        .to_str()
        .filter(|f| is_filter(f))
        .and_then(|f| normalized(f).parse::<Targets>().ok())
        .ok_or_else(|| super::problems::Refused::NotALogFilter { value: filter.to_string_lossy().into_owned() })?;
    // A second init (only possible in tests) keeps the first subscriber.
    // fmt's own bound is INFO unless set: the filter alone decides.
    let fmt = tracing_subscriber::fmt().with_max_level(tracing::level_filters::LevelFilter::TRACE);
    let _ = fmt.with_writer(|| Stderr).event_format(Line).finish().with(filter).try_init();
    Ok(())
}

/// Whether `text` is a filter the wrapper's log can use: comma-separated levels (`debug`) or `target=level`
/// directives. tracing would also take any bare word as a target name (`NVCC_WRAPPER_LOG=garbage` logs nothing, with
/// no word said), so a word that is not a level is refused.
fn is_filter(text: &str) -> bool {
    let level =
        |l: &str| matches!(l.to_ascii_lowercase().as_str(), "off" | "error" | "warn" | "info" | "debug" | "trace");
    let target = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    text.split(',').map(str::trim).filter(|d| !d.is_empty()).all(|d| match d.split_once('=') {
        Some((t, l)) => target(t) && level(l),
        None => level(d),
    }) && text.split(',').any(|d| !d.trim().is_empty())
}

/// The filter's directives without blanks around them or empty ones: `" debug ,"` is `debug`.
fn normalized(text: &str) -> String {
    text.split(',').map(str::trim).filter(|d| !d.is_empty()).collect::<Vec<_>>().join(",")
}

struct Line;

/// stderr for the log, best effort: a line that cannot be written (the reader gone, a full disk) is dropped, and the
/// call ends as it would have (tracing's own writer reports the failure on stderr, which then panics).
struct Stderr;

impl std::io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().lock().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        write!(writer, "nvcc-wrapper[{}]: ", event.metadata().level())?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::{is_filter, normalized};

    #[test]
    fn levels_and_directives_are_filters_and_other_words_are_not() {
        for good in ["debug", "TRACE", "nvcc_wrapper=debug", "warn,nvcc_wrapper::plan=trace", " info "] {
            assert!(is_filter(good), "{good:?}");
        }
        for bad in ["garbage", "debgu", "nvcc_wrapper=loud", "=debug", ",", "a b=debug"] {
            assert!(!is_filter(bad), "{bad:?}");
        }
        // Issue 26: `debug ` was accepted and given to tracing as it was, which then logged nothing.
        assert_eq!(normalized(" debug "), "debug");
        assert_eq!(normalized("warn , nvcc_wrapper::plan=trace,"), "warn,nvcc_wrapper::plan=trace");
    }
}
