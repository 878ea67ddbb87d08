//! The MCP server over rmcp (MC-1, MC-8, MC-10, MC-12).

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use crate::registry::{Outcome, Registry, ToolDef};

/// The server's name in `serverInfo` (MC-12).
pub const SERVER_NAME: &str = "shiftwork-mcp";

/// The MCP server: a registry of tools behind rmcp's [`ServerHandler`].
#[derive(Clone)]
pub struct Server {
    registry: Arc<Registry>,
    instructions: Arc<str>,
}

impl Server {
    /// A server for `registry`, announcing `instructions` in its `initialize` answer.
    pub fn new(registry: Registry, instructions: String) -> Self {
        Server {
            registry: Arc::new(registry),
            instructions: instructions.into(),
        }
    }
}

/// The rmcp descriptor of a tool (MC-7).
pub fn descriptor(tool: &ToolDef) -> Tool {
    let object = |v: &Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    let hints = tool.hints;
    let annotations = ToolAnnotations::with_title(tool.title)
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world);
    Tool::new(
        Cow::Borrowed(tool.name),
        Cow::Borrowed(tool.description),
        object(&tool.input_schema),
    )
    .with_title(tool.title)
    .with_raw_output_schema(object(&tool.output_schema))
    .with_annotations(annotations)
}

/// The MCP result of an outcome (MC-8): `structuredContent` plus one text block with the same JSON, or
/// a tool error with one text block.
pub fn render(outcome: &Outcome) -> CallToolResult {
    match outcome {
        Outcome::Answer(value, _) | Outcome::Rendered(value, _) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(outcome.text())]);
            result.structured_content = Some(value.clone());
            result
        }
        Outcome::ToolError(message) => CallToolResult::error(vec![ContentBlock::text(message.clone())]),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.registry.tools().iter().map(descriptor).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.registry.get(&name).is_none() {
            return Err(McpError::invalid_params(format!("unknown tool '{name}'"), None));
        }
        let arguments: Map<String, Value> = request.arguments.unwrap_or_default();
        let registry = Arc::clone(&self.registry);
        // Handlers block (file locks, SQLite): run them off the async workers (WL-65, CT-89).
        let outcome =
            tokio::task::spawn_blocking(move || registry.get(&name).map(|tool| tool.call(&arguments)))
                .await
                .map_err(|e| McpError::internal_error(format!("the tool handler panicked: {e}"), None))?;
        match outcome {
            Some(outcome) => Ok(render(&outcome).into()),
            None => Err(McpError::internal_error(
                "the tool vanished from the registry",
                None,
            )),
        }
    }
}

/// Serves `server` over stdin/stdout until the client closes stdin (MC-1).
pub async fn serve_stdio(server: Server) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use rmcp::ServiceExt;
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
