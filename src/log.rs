//! The debug log: off unless `NVCC_WRAPPER_LOG` holds a tracing filter (`debug`, `nvcc_wrapper=trace`). Lines go to
//! stderr as `nvcc-wrapper[LEVEL]: message`, never to stdout, which belongs to nvcc.

use std::fmt;

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};

pub fn init(ctx: &Context) -> Result<()> {
    let Some(filter) = ctx.env.non_empty(vars::LOG) else {
        return Ok(());
    };
    let filter = filter.to_str().and_then(|f| EnvFilter::try_new(f).ok()).ok_or_else(|| {
        Error::new(ErrorKind::Environment, format!("{}={} is not a log filter", vars::LOG, filter.to_string_lossy()))
            .with_help(format!("use a level such as {}=debug, or unset it", vars::LOG))
    })?;
    // A second init (only possible in tests) keeps the first subscriber.
    let _ =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).event_format(Line).try_init();
    Ok(())
}

struct Line;

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
