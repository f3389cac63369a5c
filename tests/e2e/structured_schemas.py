"""The JSON Schemas the structured-output tests hold both models to: nested
objects, enums, arrays, $ref (recursive too), patterns, formats, bounds.
Strings and arrays carry bounds where the schema allows, so that even a small
model's answer fits a short max_tokens."""

SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20},
                       "age": {"type": "integer", "minimum": 0, "maximum": 120}},
        "required": ["name", "age"], "additionalProperties": False,
    },
    "color_enum": {
        "type": "object", "properties": {"color": {"enum": ["red", "green", "blue"]}},
        "required": ["color"],
    },
    "boolean": {
        "type": "object", "properties": {"answer": {"type": "boolean"}}, "required": ["answer"],
    },
    "number_bounds": {
        "type": "object",
        "properties": {"celsius": {"type": "number", "minimum": -50, "maximum": 60}},
        "required": ["celsius"],
    },
    "string_array": {
        "type": "object",
        "properties": {"fruits": {"type": "array", "items": {"type": "string", "maxLength": 12},
                                  "minItems": 1, "maxItems": 3}},
        "required": ["fruits"],
    },
    "nested_address": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "address": {"type": "object",
                        "properties": {"city": {"type": "string", "maxLength": 20},
                                       "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
                        "required": ["city", "zip"]},
        },
        "required": ["name", "address"],
    },
    "ref_points": {
        "$defs": {"Point": {"type": "object",
                            "properties": {"x": {"type": "integer", "minimum": -9, "maximum": 9},
                                           "y": {"type": "integer", "minimum": -9, "maximum": 9}},
                            "required": ["x", "y"]}},
        "type": "object",
        "properties": {"start": {"$ref": "#/$defs/Point"}, "end": {"$ref": "#/$defs/Point"}},
        "required": ["start", "end"],
    },
    "recursive_list": {
        "$defs": {"Item": {"type": "object",
                           "properties": {"word": {"type": "string", "maxLength": 8},
                                          "next": {"anyOf": [{"$ref": "#/$defs/Item"},
                                                             {"type": "null"}]}},
                           "required": ["word", "next"]}},
        "$ref": "#/$defs/Item",
    },
    "pattern_code": {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"}},
        "required": ["code"],
    },
    "format_date": {
        "type": "object", "properties": {"date": {"type": "string", "format": "date"}},
        "required": ["date"],
    },
    "format_date_time": {
        "type": "object", "properties": {"when": {"type": "string", "format": "date-time"}},
        "required": ["when"],
    },
    "format_time": {
        "type": "object", "properties": {"time": {"type": "string", "format": "time"}},
        "required": ["time"],
    },
    "format_email": {
        "type": "object", "properties": {"email": {"type": "string", "format": "email"}},
        "required": ["email"],
    },
    "format_uuid": {
        "type": "object", "properties": {"id": {"type": "string", "format": "uuid"}},
        "required": ["id"],
    },
    "format_uri": {
        "type": "object", "properties": {"homepage": {"type": "string", "format": "uri"}},
        "required": ["homepage"],
    },
    "format_ipv4": {
        "type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}},
        "required": ["ip"],
    },
    "any_of": {
        "type": "object",
        "properties": {"value": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 999},
                                           {"type": "string", "maxLength": 10}]}},
        "required": ["value"],
    },
    "one_of_tagged": {
        "type": "object",
        "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"},
                                              "radius": {"type": "integer", "minimum": 1,
                                                         "maximum": 99}},
             "required": ["kind", "radius"]},
            {"type": "object", "properties": {"kind": {"const": "square"},
                                              "side": {"type": "integer", "minimum": 1,
                                                       "maximum": 99}},
             "required": ["kind", "side"]}]}},
        "required": ["shape"],
    },
    "all_of": {
        "allOf": [{"type": "object",
                   "properties": {"digit": {"type": "integer", "minimum": 0, "maximum": 9}},
                   "required": ["digit"]}],
    },
    "const_field": {
        "type": "object",
        "properties": {"version": {"const": "1.0"}, "ok": {"type": "boolean"}},
        "required": ["version", "ok"],
    },
    "nullable_type_list": {
        "type": "object",
        "properties": {"nickname": {"type": ["string", "null"], "maxLength": 10}},
        "required": ["nickname"],
    },
    "tuple_prefix_items": {
        "type": "object",
        "properties": {"pair": {"type": "array",
                                "prefixItems": [{"type": "string", "maxLength": 10},
                                                {"type": "integer", "minimum": 0, "maximum": 99}],
                                "items": False}},
        "required": ["pair"],
    },
    "integer_enum": {
        "type": "object", "properties": {"stars": {"enum": [1, 2, 3, 4, 5]}},
        "required": ["stars"],
    },
    "object_array": {
        "type": "object",
        "properties": {"order": {"type": "array", "minItems": 1, "maxItems": 2, "items": {
            "type": "object",
            "properties": {"item": {"type": "string", "maxLength": 10},
                           "qty": {"type": "integer", "minimum": 1, "maximum": 9}},
            "required": ["item", "qty"]}}},
        "required": ["order"],
    },
    "string_length": {
        "type": "object",
        "properties": {"word": {"type": "string", "minLength": 3, "maxLength": 8}},
        "required": ["word"],
    },
    "exclusive_bounds": {
        "type": "object",
        "properties": {"percent": {"type": "integer", "exclusiveMinimum": 0,
                                   "exclusiveMaximum": 100}},
        "required": ["percent"],
    },
    "integer_array_root": {
        "type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
        "minItems": 2, "maxItems": 4,
    },
    "enum_root": {"enum": ["yes", "no", "maybe"]},
    "optional_field": {
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 20},
                       "year": {"type": "integer", "minimum": 1900, "maximum": 2100}},
        "required": ["title"],
    },
    "multiple_of": {
        "type": "object",
        "properties": {"even": {"type": "integer", "multipleOf": 2, "minimum": 0,
                                "maximum": 100}},
        "required": ["even"],
    },
    "map_of_integers": {
        "type": "object",
        "properties": {"scores": {"type": "object", "maxProperties": 2,
                                  "propertyNames": {"pattern": "^[a-z]{1,6}$"},
                                  "additionalProperties": {"type": "integer", "minimum": 0,
                                                           "maximum": 9}}},
        "required": ["scores"],
    },
}

PROMPTS = {
    "person": "Describe a person named Ann who is 31.",
    "color_enum": "What color is the sky?",
    "boolean": "Is water wet?",
    "number_bounds": "How warm is a summer day in Rome, in Celsius?",
    "string_array": "Name two fruits.",
    "nested_address": "Give the address of Bob, who lives in Boston.",
    "ref_points": "Give a line from (1, 2) to (3, 4).",
    "recursive_list": "Make a list of just one word, cat; it has no next word, so next is null.",
    "pattern_code": "Make up a product code.",
    "format_date": "When is New Year's Day 2025?",
    "format_date_time": "When did the year 2020 start, as a timestamp?",
    "format_time": "What time is noon, written like 09:30:00Z?",
    "format_email": "Make up an email address for Ann, like ann@example.com.",
    "format_uuid": "Make up an identifier.",
    "format_uri": "What is the URL of the homepage of example.com, like https://example.org/?",
    "format_ipv4": "What is the loopback address?",
    "any_of": "Pick a value.",
    "one_of_tagged": "Describe a circle of radius 3.",
    "all_of": "Pick a digit.",
    "const_field": "Report the version and that all is well.",
    "nullable_type_list": "Does Ann have a nickname?",
    "tuple_prefix_items": "Give a name and a number.",
    "integer_enum": "Rate this movie.",
    "object_array": "Order two apples.",
    "string_length": "Say a short word.",
    "exclusive_bounds": "What percent is half?",
    "integer_array_root": "List three digits.",
    "enum_root": "Will it rain tomorrow?",
    "optional_field": "Name a book.",
    "multiple_of": "Pick an even number.",
    "map_of_integers": "Score two players.",
}

# Asked greedily only: sampled, models this small nest a recursive schema
# until max_tokens (the grammar bounds no depth), so only greedy decoding
# shows whether the answer follows it.
GREEDY_ONLY = {"recursive_list"}
