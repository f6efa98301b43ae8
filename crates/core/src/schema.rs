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
            .inner
            .iter_errors(args)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("{at}: {error}")
                }
            })
            .collect();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(SchemaError::Invalid(messages.join("; ")))
        }
    }
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
}
