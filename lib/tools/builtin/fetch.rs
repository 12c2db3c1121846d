//! `url_fetch`: GET a URL and return its text. The host must be in the
//! agent's `allowed_hosts` when it has one; its name is looked up once
//! and every address checked ([`super::hosts`]); the connection goes to
//! a checked address ([`super::http_get`]). A redirect is checked the
//! same way, its own lookup included, at most 10 of them; all of it within
//! 15 seconds and the run's deadline. HTML comes back as text; at most
//! 10,000 characters, as Go's.

use crate::error::ToolError;
use std::time::{Duration, Instant};

use super::act::{Act, text_schema};
use super::http_get::{self, Url};
use super::{hosts, html};
use crate::args::Args;
use crate::{Reply, Tool};

const TIMEOUT: Duration = Duration::from_secs(15);
const MAX_REDIRECTS: usize = 10;
const MAX_CHARS: usize = 10_000;

crate::args! {
    pub struct UrlFetch {
        url: String = "The URL to fetch.",
    }
}

pub const URL_FETCH: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::URL_FETCH,
    description: "Fetch content from a URL using HTTP GET and return the response body as text.",
    offered: |act| act.gives(URL_FETCH.name),
    schema: UrlFetch::schema,
    run: |act, args| url_fetch(act, UrlFetch::parse(args)?),
    output: text_schema,
    reads: true,
    workdir: false,
};

fn url_fetch(act: &Act, args: UrlFetch) -> Result<Reply, ToolError> {
    let given = args.url.as_str();
    if given.is_empty() {
        return Err("url is required".into());
    }
    let deadline = act.deadline.min(Instant::now() + TIMEOUT);
    let mut url = Url::parse(given)?;
    let mut redirects = 0;
    let response = loop {
        hosts::allowed(&url.host, &act.allowed_hosts)?;
        let addrs = hosts::resolve(&url.host, url.port)?;
        let response = http_get::get(&act.client, &url, &addrs, deadline)
            .map_err(|e| ToolError::caused(format!("Get {:?}: {e}", url.to_text()), e))?;
        let location = response
            .location
            .as_deref()
            .filter(|_| matches!(response.status, 301 | 302 | 303 | 307 | 308));
        let Some(location) = location else {
            break response;
        };
        if redirects == MAX_REDIRECTS {
            return Err(format!(
                "Get {:?}: stopped after {MAX_REDIRECTS} redirects",
                url.to_text()
            )
            .into());
        }
        redirects += 1;
        url = url.join(location)?;
    };
    let body = String::from_utf8_lossy(&response.body);
    let media = response.content_type.split(';').next().unwrap_or_default();
    let mut body = match media.trim().eq_ignore_ascii_case("text/html") {
        true => html::text(&body),
        false => body.into_owned(),
    };
    if let Some((cut, _)) = body.char_indices().nth(MAX_CHARS) {
        body.truncate(cut);
        body.push_str("\n... [response truncated, exceeded 10000 characters]");
    }
    match response.status {
        200..=299 => Ok(Reply::text(body)),
        status => Err(format!("HTTP {status}: {body}").into()),
    }
}
