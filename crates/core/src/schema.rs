//! Argument validation against a tool's input JSON Schema, with messages a person can act on.

use serde_json::Value;

/// Why arguments were refused.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SchemaError {
    #[error("the tool's input schema is itself invalid: {0}")]
    BadSchema(String),
    #[error("arguments do not match the tool's schema: {0}")]
    Invalid(String),
}

/// A compiled validator for one tool's input schema.
pub struct ArgsValidator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for ArgsValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgsValidator")
    }
}

impl ArgsValidator {
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        jsonschema::validator_for(schema)
            .map(|inner| Self { inner })
            .map_err(|e| SchemaError::BadSchema(e.to_string()))
    }

    /// Checks the arguments; the error lists every violation with where it is.
    pub fn validate(&self, args: &Value) -> Result<(), SchemaError> {
        let messages: Vec<String> = self
            .violations(args)
            .into_iter()
            .map(|violation| match violation.at.is_empty() {
                true => violation.message,
                false => format!("{}: {}", violation.at, violation.message),
            })
            .collect();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(SchemaError::Invalid(messages.join("; ")))
        }
    }

    /// Every way the arguments break the schema, each with the top-level field it concerns, so
    /// that a form can name the field a person filled in rather than a JSON path.
    pub fn violations(&self, args: &Value) -> Vec<Violation> {
        self.inner
            .iter_errors(args)
            .map(|error| {
                let at = error.instance_path().to_string();
                let (field, missing) = match error.kind() {
                    jsonschema::error::ValidationErrorKind::Required { property } => {
                        (property.as_str().map(str::to_string), true)
                    }
                    _ => (top_level_field(&at), false),
                };
                Violation {
                    field,
                    missing,
                    at,
                    message: error.to_string(),
                }
            })
            .collect()
    }
}

/// One violation of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The top-level property it concerns (for `required`, the missing one).
    pub field: Option<String>,
    /// The field is required and absent.
    pub missing: bool,
    /// Where in the arguments (a JSON pointer; empty for the whole object).
    pub at: String,
    pub message: String,
}

/// The first segment of a JSON pointer, unescaped (`/a~1b/0` is `a/b`).
fn top_level_field(pointer: &str) -> Option<String> {
    let first = pointer.strip_prefix('/')?.split('/').next()?;
    Some(first.replace("~1", "/").replace("~0", "~"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_what_is_wrong() {
        let schema =
            json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]});
        let validator = ArgsValidator::new(&schema).unwrap();
        assert!(validator.validate(&json!({"path": "a"})).is_ok());
        let err = validator
            .validate(&json!({"path": 3}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("/path") && err.contains("string"), "{err}");
        let err = validator.validate(&json!({})).unwrap_err().to_string();
        assert!(err.contains("required"), "{err}");
    }

    #[test]
    fn violations_name_the_top_level_field() {
        let schema = json!({"type":"object","properties":{
            "a/b": {"type":"integer","maximum":3},
            "tags": {"type":"array","items":{"enum":["x"]}}
        },"required":["name"]});
        let validator = ArgsValidator::new(&schema).unwrap();
        let found = validator.violations(&json!({"a/b": 5, "tags": ["y"]}));
        let fields: Vec<_> = found
            .iter()
            .map(|v| (v.field.as_deref(), v.missing))
            .collect();
        assert!(fields.contains(&(Some("name"), true)), "{found:?}");
        assert!(fields.contains(&(Some("a/b"), false)), "{found:?}");
        assert!(fields.contains(&(Some("tags"), false)), "{found:?}");
    }
}
