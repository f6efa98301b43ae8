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

    /// The arguments as the schema takes them: unchanged when they match it; else, when leaving
    /// out the top-level fields set to `null` makes them match (a model's way of saying "not
    /// given" for an optional field, which the schema may not allow as a value), without those
    /// fields; else the error. The call shown for approval is the one returned.
    pub fn accept(&self, args: Value) -> Result<Value, (Value, SchemaError)> {
        let error = match self.validate(&args) {
            Ok(()) => return Ok(args),
            Err(error) => error,
        };
        let Value::Object(fields) = &args else {
            return Err((args, error));
        };
        if !fields.values().any(Value::is_null) {
            return Err((args, error));
        }
        let given: serde_json::Map<String, Value> = fields
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        let given = Value::Object(given);
        match self.validate(&given) {
            Ok(()) => Ok(given),
            Err(_) => Err((args, error)),
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

/// Fills in the defaults of an elicitation's requested schema for fields the person left out.
pub fn with_defaults(schema: &Value, mut content: Value) -> Value {
    if let (Some(properties), Some(object)) = (
        schema.get("properties").and_then(Value::as_object),
        content.as_object_mut(),
    ) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !object.contains_key(name)
            {
                object.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

/// Checks an elicitation's accepted answer against the requested form (after its defaults are filled in);
/// a refusal names each field at fault by its title, as the form showed it.
pub fn check_answer(schema: &Value, content: &Value) -> std::result::Result<(), String> {
    let validator = ArgsValidator::new(schema)
        .map_err(|error| format!("the server's form cannot be checked: {error}"))?;
    let faults: Vec<String> = validator
        .violations(content)
        .into_iter()
        .map(|violation| {
            let Some(field) = violation.field else {
                return violation.message;
            };
            let property = schema.get("properties").and_then(|p| p.get(&field));
            let title = property
                .and_then(|p| p.get("title"))
                .and_then(Value::as_str)
                .unwrap_or(&field);
            let named = if title == field {
                format!("\"{title}\"")
            } else {
                format!("\"{title}\" ({field})")
            };
            if violation.missing {
                format!("{named} is required")
            } else if property.is_none() {
                format!("{named} is not a field of the form")
            } else {
                format!("{named}: {}", violation.message)
            }
        })
        .collect();
    if faults.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the answer does not fit the form: {}",
            faults.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_null_optional_field_is_taken_as_not_given() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"region": {"type": "string"}, "verbose": {"type": "boolean"},
                           "note": {"type": ["string", "null"]}},
            "required": ["region"],
        });
        let validator = super::ArgsValidator::new(&schema).unwrap();
        let accept = |args: Value| validator.accept(args);
        // Valid as given (null allowed where the schema says so): unchanged.
        let valid = serde_json::json!({"region": "eu", "note": null});
        assert_eq!(accept(valid.clone()).unwrap(), valid);
        // A null the schema does not take, on an optional field: left out.
        assert_eq!(
            accept(serde_json::json!({"region": "eu", "verbose": null})).unwrap(),
            serde_json::json!({"region": "eu"})
        );
        // A null on a required field, or another mistake, stays an error with the arguments as
        // given.
        let (args, _) = accept(serde_json::json!({"region": null})).unwrap_err();
        assert_eq!(args, serde_json::json!({"region": null}));
        assert!(accept(serde_json::json!({"region": 1, "verbose": null})).is_err());
    }

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

    #[test]
    fn defaults_fill_missing_fields_only() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "x"}, "n": {"type": "integer", "default": 3}
        }});
        assert_eq!(
            with_defaults(&schema, json!({"name": "y"})),
            json!({"name": "y", "n": 3})
        );
    }

    /// server-everything's `trigger-elicitation-request` form (tests/mcp-servers); 3.14 is its
    /// default, not an approximation of pi.
    #[allow(clippy::approx_constant)]
    fn everything_form() -> Value {
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"title": "String", "type": "string"},
            "check": {"title": "Boolean", "type": "boolean"},
            "firstLine": {"title": "String with default", "type": "string", "default": "It was a dark and stormy night."},
            "email": {"title": "String with email format", "type": "string", "format": "email"},
            "homepage": {"type": "string", "format": "uri", "title": "String with uri format"},
            "birthdate": {"title": "String with date format", "type": "string", "format": "date"},
            "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"title": "Number in range 1-1000", "type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
            "untitledSingleSelectEnum": {"type": "string", "title": "Untitled Single Select Enum",
                "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"], "default": "Monica"},
            "untitledMultipleSelectEnum": {"type": "array", "title": "Untitled Multiple Select Enum", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]}, "default": ["Guitar"]},
            "titledSingleSelectEnum": {"type": "string", "title": "Titled Single Select Enum",
                "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
            "titledMultipleSelectEnum": {"type": "array", "title": "Titled Multiple Select Enum", "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}, "default": ["fish-1"]},
            "legacyTitledEnum": {"type": "string", "title": "Legacy Titled Single Select Enum",
                "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"}
        }})
    }

    #[test]
    #[allow(clippy::approx_constant)]
    fn the_forms_defaults_fit_the_form() {
        let form = everything_form();
        // What the window sends with only the required name typed (ElicitationForm.test.ts).
        let answer = json!({
            "name": "Ada", "check": false, "firstLine": "It was a dark and stormy night.",
            "integer": 42, "number": 3.14, "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"], "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"], "legacyTitledEnum": "pet-1"
        });
        assert_eq!(check_answer(&form, &answer), Ok(()));
        // The name alone, the rest filled in from the defaults, fits as well.
        assert_eq!(
            check_answer(&form, &with_defaults(&form, json!({"name": "Ada"}))),
            Ok(())
        );
    }

    #[test]
    fn a_refused_answer_names_the_fields_by_their_titles() {
        let form = everything_form();
        let answer = with_defaults(
            &form,
            json!({"integer": 500, "titledMultipleSelectEnum": "fish-1", "untitledMultipleSelectEnum": []}),
        );
        let why = check_answer(&form, &answer).unwrap_err();
        assert!(
            why.starts_with("the answer does not fit the form: "),
            "{why}"
        );
        for part in [
            r#""String" (name) is required"#,
            r#""Integer" (integer): 500 is greater than the maximum of 100"#,
            r#""Titled Multiple Select Enum" (titledMultipleSelectEnum): "#,
            r#""Untitled Multiple Select Enum" (untitledMultipleSelectEnum): "#,
        ] {
            assert!(why.contains(part), "{part} missing from: {why}");
        }
        assert!(!why.contains("edited arguments"), "{why}");
    }
}
