//! Where tools come from. Each server is a [`ToolSource`]; the registry knows every tool's
//! definition and compiled input schema, so calls and edited arguments are validated in one place.

pub mod builtin;

use airlock_core::ToolDef;
use airlock_core::policy::NeedsApproval;
use airlock_core::schema::{ArgsValidator, SchemaError};
use futures::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// A tool call failed; the message goes to the model as an error result, with what the tool
/// gave back although it failed (a command's exit code and output), when it gave anything.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
    /// The failed call's own result, shown instead of the bare message.
    pub result: Option<Value>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            result: None,
        }
    }

    /// A call that ran and failed, with what it gave back.
    pub fn failed_with(message: impl Into<String>, result: Value) -> Self {
        Self {
            message: message.into(),
            result: Some(result),
        }
    }

    /// The result the model and the transcript see: the tool's own (with `type: error` and the
    /// message added when it is an object), else the message alone.
    pub fn into_result(self) -> Value {
        match self.result {
            Some(Value::Object(mut fields)) => {
                fields.insert("type".into(), Value::String("error".into()));
                fields.insert("message".into(), Value::String(self.message));
                Value::Object(fields)
            }
            Some(other) => {
                serde_json::json!({"type": "error", "message": self.message, "result": other})
            }
            None => serde_json::json!({"type": "error", "message": self.message}),
        }
    }
}

/// Which call a tool runs for: lets a server's requests during the call (elicitation) land in
/// the right session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    pub session_id: String,
    pub session: String,
    pub tool_call_id: String,
}

/// A server that offers tools: the built-in one and each MCP server.
pub trait ToolSource: Send + Sync {
    fn tools(&self) -> Vec<ToolDef>;
    /// A code-defined tool's own opinion on whether this call needs a person.
    fn needs_approval(&self, _tool: &str, _args: &Value) -> Option<NeedsApproval> {
        None
    }
    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
    /// Runs a call knowing which session and call it is for. Dropping the future cancels it.
    fn call_in<'a>(
        &'a self,
        _context: &'a CallContext,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        self.call(tool, args)
    }
}

/// A tool with its compiled validator.
pub struct RegisteredTool {
    pub def: ToolDef,
    validator: Result<ArgsValidator, SchemaError>,
}

impl RegisteredTool {
    pub fn validate(&self, args: &Value) -> Result<(), SchemaError> {
        match &self.validator {
            Ok(validator) => validator.validate(args),
            Err(error) => Err(error.clone()),
        }
    }

    /// A model's arguments as the tool takes them ([`ArgsValidator::accept`]: a `null` on an
    /// optional field the schema does not allow null for is taken as not given), or the
    /// arguments as given and why they are refused.
    pub fn accept(&self, args: Value) -> Result<Value, (Value, SchemaError)> {
        match &self.validator {
            Ok(validator) => validator.accept(args),
            Err(error) => Err((args, error.clone())),
        }
    }
}

#[derive(Default)]
struct Registered {
    sources: HashMap<String, Arc<dyn ToolSource>>,
    tools: HashMap<String, HashMap<String, Arc<RegisteredTool>>>,
}

/// Every server's tools, by server then tool name.
#[derive(Default)]
pub struct ToolRegistry {
    inner: RwLock<Registered>,
}

impl ToolRegistry {
    /// Adds or replaces a server and (re)compiles its tools' schemas.
    pub fn register(&self, server: &str, source: Arc<dyn ToolSource>) {
        let tools = source
            .tools()
            .into_iter()
            .map(|def| {
                let validator = ArgsValidator::new(&def.input_schema);
                (
                    def.name.clone(),
                    Arc::new(RegisteredTool { def, validator }),
                )
            })
            .collect();
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.sources.insert(server.to_string(), source);
        inner.tools.insert(server.to_string(), tools);
    }

    /// Removes a server and its tools (stopped, failed or disabled).
    pub fn unregister(&self, server: &str) {
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.sources.remove(server);
        inner.tools.remove(server);
    }

    pub fn tool(&self, server: &str, tool: &str) -> Option<Arc<RegisteredTool>> {
        let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
        inner
            .tools
            .get(server)
            .and_then(|tools| tools.get(tool))
            .cloned()
    }

    pub fn source(&self, server: &str) -> Option<Arc<dyn ToolSource>> {
        let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
        inner.sources.get(server).cloned()
    }

    /// Every tool, sorted by server then name.
    pub fn all(&self) -> Vec<Arc<RegisteredTool>> {
        let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<_> = inner
            .tools
            .values()
            .flat_map(|tools| tools.values().cloned())
            .collect();
        all.sort_by(|a, b| (&a.def.server, &a.def.name).cmp(&(&b.def.server, &b.def.name)));
        all
    }
}
