"""The Jinja environment transformers.apply_chat_template renders chat
templates in (transformers/utils/chat_template_utils.py,
_compile_jinja_template), with the clock fixed so that renderings that call
strftime_now are reproducible: 2024-07-26 12:00:00, local time.
"""

import datetime
import json

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

FIXED_NOW = datetime.datetime(2024, 7, 26, 12, 0, 0)


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(format):
    return FIXED_NOW.strftime(format)


def make_environment():
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env
