//! `web_search`: a query to Tavily (`TAVILY_API_KEY`; its base URL from
//! `AXE_WEB_SEARCH_BASE_URL`, or Go's `AXE_TAVILY_BASE_URL`, for tests
//! and proxies), the results as Go formats them.

use crate::error::ToolError;
use std::io::Read;
use std::time::{Duration, Instant};

use axe_base::error::describe_io as describe;
use axe_net::Method;
use serde::Deserialize;
use serde_json::json;

use super::act::{Act, text_schema};
use crate::args::Args;
use crate::{Reply, Tool};
use axe_tool_settings::builtin::{WEB_SEARCH_BASE_URL_VARS, WEB_SEARCH_KEY_VAR};

const DEFAULT_URL: &str = "https://api.tavily.com";
const MAX_RESULTS: u32 = 10;
/// The largest answer read, as Go's.
const RESPONSE_LIMIT: usize = 100 * 1024;
/// How much of an error's body is shown.
const ERROR_BODY: usize = 500;
const TIMEOUT: Duration = Duration::from_secs(30);

crate::args! {
    pub struct WebSearch {
        query: String = "The search query to perform.",
    }
}

pub const WEB_SEARCH: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::WEB_SEARCH,
    description: "Search the web using Tavily and return text results including titles, URLs, and snippets.",
    offered: |act| act.gives(WEB_SEARCH.name),
    schema: WebSearch::schema,
    run: |act, args| web_search(act, WebSearch::parse(args)?),
    output: text_schema,
    reads: true,
    workdir: false,
};

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    results: Vec<Found>,
}

#[derive(Deserialize)]
struct Found {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    content: String,
}

fn web_search(act: &Act, args: WebSearch) -> Result<Reply, ToolError> {
    let query = args.query.as_str();
    if query.is_empty() {
        return Err("query is required".into());
    }
    let key = std::env::var(WEB_SEARCH_KEY_VAR).unwrap_or_default();
    if key.is_empty() {
        return Err(format!("{WEB_SEARCH_KEY_VAR} environment variable is not set").into());
    }
    let base = WEB_SEARCH_BASE_URL_VARS
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    let body = json!({
        "query": query, "max_results": MAX_RESULTS, "search_depth": "basic",
        "api_key": key, "include_images": false, "include_videos": false,
    });
    let left = act
        .deadline
        .min(Instant::now() + TIMEOUT)
        .saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("web_search: the run's deadline has passed".into());
    }
    let url = format!("{}/search", base.trim_end_matches('/'));
    let bearer = format!("Bearer {key}");
    let headers = [
        ("content-type", "application/json"),
        ("authorization", bearer.as_str()),
    ];
    let deadline = Instant::now() + left;
    // Never printed: the error names the endpoint, not the request.
    let failed =
        |e: std::io::Error| ToolError::caused(format!("web_search: {base}: {}", describe(&e)), e);
    let response = act
        .client
        .send(
            Method::Post,
            &url,
            &headers,
            Some(body.to_string().as_bytes()),
            deadline,
        )
        .map_err(failed)?;
    let status = response.status;
    let mut raw = Vec::new();
    response
        .into_reader()
        .take(RESPONSE_LIMIT as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(failed)?;
    if raw.len() > RESPONSE_LIMIT {
        return Err("Tavily response too large to process".into());
    }
    if !(200..300).contains(&status) {
        let mut shown = String::from_utf8_lossy(&raw).into_owned();
        if let Some((cut, _)) = shown.char_indices().nth(ERROR_BODY) {
            shown.truncate(cut);
        }
        return Err(format!("Tavily API error (HTTP {status}): {shown}").into());
    }
    let parsed: Results = serde_json::from_slice(&raw)
        .map_err(|e| ToolError::caused(format!("failed to parse Tavily response: {e}"), e))?;
    if parsed.results.is_empty() {
        return Ok(Reply::text("No results found.".into()));
    }
    let shown: Vec<String> = parsed
        .results
        .iter()
        .map(|r| format!("Title: {}\nURL: {}\nSnippet: {}", r.title, r.url, r.content))
        .collect();
    Ok(Reply::text(shown.join("\n\n").trim().to_owned()))
}
