#!/usr/bin/env python3
"""Renders small Jinja templates, one language feature each, with Python's
jinja2 in the environment transformers.apply_chat_template uses, and writes
tests/data/jinja_goldens.json: the reference for ladder's Jinja interpreter
(tests/unit/tokenizer/jinja_goldens_test.cpp). Needs only the jinja2 package.

    python scripts/goldens/jinja_goldens.py > tests/data/jinja_goldens.json
"""

import json
import sys

import jinja2

from chat_template_environment import make_environment

CONTEXT = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "  What's the weather in Paris?  "},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
        {"role": "assistant", "content": "It is 21 \u00b0C."},
    ],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}],
    "d": {"items": 1, "a": 2, "z": [1, 2]},
    "n": 7,
    "f": 2.5,
    "s": "Hello, W\u00f6rld",
    "empty": "",
    "nothing": None,
    "flag": True,
    "nums": [3, 1, 2],
    "words": ["b", "A", "a", "c"],
}

CASES = [
    # output and literals
    "plain text",
    "{{ 'a' }}{{ \"b\" }}{{ 'c' 'd' }}",
    "{{ 1 }} {{ -1 }} {{ 1.5 }} {{ 1e3 }} {{ 1_000 }} {{ 0x1f }} {{ 0o17 }} {{ 0b101 }}",
    "{{ true }} {{ false }} {{ none }} {{ True }} {{ None }}",
    "{{ [1, 'a', none, true, 1.5] }}|{{ ('a',) }}|{{ () }}|{{ (1, 2) }}|{{ {'k': 'v', 1: [2]} }}",
    "{{ \"it's\" }}|{{ ['it\\'s', 'say \"hi\"', 'both \\' \"'] }}",
    "{{ \"a\\tb\\\\c\\nd\\x41\\u00e9\\U0001F600\\q\" }}",
    "{{ ['tab\\t', 'nl\\n', '\\x00', '\\u00a0', '\\u2028', 'caf\\u00e9', '\\x7f'] }}",
    "{{ 1e16 }} {{ 1e15 }} {{ 0.1 + 0.2 }} {{ 1e-5 }} {{ 0.0001 }} {{ 100.0 }} {{ -0.0 }} {{ 1.5e-7 }} {{ 123456789.125 }}",
    "{{ n }} {{ f }} {{ s }} {{ empty }}|{{ nothing }}|{{ flag }}",
    "{{ undefined_name }}|{{ d.missing }}|{{ nothing.x }}",
    # arithmetic and operators
    "{{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}",
    "{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 1 + 2.0 }} {{ true + 1 }} {{ 3 * 1.5 }}",
    "{{ -2 ** 2 }} {{ 2 * 3 + 1 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }} {{ 2 ** 3 ** 2 }}",
    "{{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [1] * 3 }} {{ 'x' * 0 }}|{{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }}",
    "{{ 'a' ~ 1 ~ none ~ true ~ undefined_name ~ [1] }}",
    "{{ 'a' + 1 }}",
    "{{ 1 + 'a' }}",
    "{{ 1 / 0 }}",
    "{{ 1 // 0 }}",
    "{{ undefined_name + 1 }}",
    "{{ - 'a' }}",
    "{{ '%s and %d' % ('x', 3) }}|{{ '%05.1f|%-4s|%x' % (3.14159, 'ab', 255) }}|{{ '%(a)s' % {'a': 1} }}",
    # comparisons and logic
    "{{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' == 'a' }} {{ [1, 2] == [1, 2] }} {{ (1,) == [1] }} {{ {'a': 1} == {'a': 1} }} {{ none == none }}",
    "{{ 1 != 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' > 'a' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2 }} {{ 1 <= 0 }}",
    "{{ 'a' < 1 }}",
    "{{ 'a' in 'abc' }} {{ 'x' in ['x'] }} {{ 'items' in d }} {{ 2 not in nums }} {{ 'q' in undefined_name }}",
    "{{ 1 in 'abc' }}",
    "{{ 0 or 'x' }}|{{ '' or none }}|{{ 1 and [] }}|{{ not none }}|{{ not 1 == 2 }}|{{ none and undefined_name.x }}",
    "{{ 1 if true else 2 }}|{{ 1 if false else 2 }}|{{ 1 if false }}|{{ 'a' if none.a else 'b' }}|{{ 1 if 0 else 2 if 0 else 3 }}",
    # attributes, items, slices
    "{{ messages[0].role }} {{ messages[0]['content'] }} {{ messages[-1].content }} {{ messages[1].content.strip() }}",
    "{{ d['items'] }} {{ d.a }} {{ d['z'][1] }} {{ d.z.0 }} {{ nums[5] }}| {{ 'abc'[1] }} {{ 'abc'[-1] }} {{ s[8] }}",
    "{{ nums[::-1] }} {{ nums[1:] }} {{ nums[:-1] }} {{ nums[::2] }} {{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ s[7:] }} {{ nums[10:] }} {{ nums[-10:1] }}",
    "{{ nums[::0] }}",
    "{{ undefined_name.x }}",
    "{{ undefined_name['x'] }}",
    "{{ messages[2].tool_calls[0].function.arguments.city }} {{ messages[2].tool_calls[0].function['name'] }}",
    "{{ messages[0].tool_calls is defined }} {{ messages[2].tool_calls is defined }} {{ messages[2].content is none }}",
    # whitespace control, trim_blocks, lstrip_blocks
    "a\n{% if true %}\nb\n{% endif %}\nc",
    "a\n    {% if true %}\n    b\n    {% endif %}\nc",
    "a  {%- if true -%}  b  {%- endif -%}  c",
    "a\n  {{ 'x' }}  \n  {{- 'y' -}}  \nb",
    "a\n  {%+ if true %}b{% endif %}\n",
    "{% if true +%}\nkept newline{% endif %}",
    "line\n  {# a comment #}\nnext",
    "x {#- trimmed -#} y",
    "  {% raw %}{{ not evaluated }} {% if %}{% endraw %}\nafter",
    "{% for i in [1, 2] %}\n  item {{ i }}\n{% endfor %}\n",
    "{% for i in [1, 2] -%}\n  item {{ i }}\n{%- endfor %}\n",
    "trailing newline\n",
    "windows\r\nline\rends\r\n{% if true %}\r\nx{% endif %}",
    "{{ 'a' }}\n{{ 'b' }}\n",
    "\t {% if true %}tab{% endif %}",
    "text {% if true %}\n  {% endif %}",
    # set, namespaces, scoping
    "{% set x = 1 %}{% set y = x + 1 %}{{ x }}{{ y }}",
    "{% set a, b = [1, 2] %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}",
    "{% set x %}  block {{ 1 }} {% endset %}[{{ x }}]",
    "{% set x | upper | replace('B', 'b') %}abc{% endset %}[{{ x }}]",
    "{% set count = 0 %}{% for i in range(3) %}{% set count = count + 1 %}{{ count }}{% endfor %}{{ count }}",
    "{% for i in range(3) %}{% if i > 0 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}[{{ y }}]",
    "{% if true %}{% set z = 5 %}{% endif %}{{ z }}",
    "{% set ns = namespace(a=1, items=[]) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.a }} {{ ns.items }} {{ ns }}",
    "{% set ns = namespace({'x': 1}, y=2) %}{{ ns.x }}{{ ns.y }}{{ ns.missing }}|{{ ns['x'] }}",
    "{% set x = 1 %}{% set x.y = 2 %}",
    "{% filter upper %}{% set fx = 1 %}abc{{ 'd' }}{% endfilter %}[{{ fx }}]",
    "{% with a = 1, b = 2 %}{{ a + b }}{% set c = 9 %}{% endwith %}[{{ a }}{{ c }}]",
    # for loops
    "{% for a in [3, 1, 2] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }},{% endfor %}",
    "{% for a in [3, 1, 2] if a > 1 %}{{ loop.index }}/{{ loop.length }}:{{ a }} {% else %}none{% endfor %}",
    "{% for a in [] %}x{% else %}empty{% endfor %}|{% for a in undefined_name %}x{% else %}undef{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k in d %}{{ k }}{% endfor %}|{% for c in 'ab' %}{{ c }}.{% endfor %}",
    "{% for a, b in [[1, 2], (3, 4)] %}{{ a }}{{ b }}{% endfor %}|{% for (a, b) in [[5, 6]] %}{{ a }}{{ b }}{% endfor %}",
    "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}",
    "{% for i in [1, 2] %}{% for j in [3, 4] %}{{ loop.index }}{{ i }}{{ j }} {% endfor %}{{ loop.index }};{% endfor %}",
    "{% for i in range(4) %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %}",
    "{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
    "{% for item in [{'n': 'a', 'c': [{'n': 'b', 'c': []}]}] recursive %}{{ loop.depth }}{{ item.n }}[{{ loop(item.c) }}]{% endfor %}",
    "{{ range(3) | list }}{{ range(1, 10, 3) | list }}{{ range(5, 0, -2) | list }}{{ range(0) | list }}",
    "{{ range(200000) | length }}",
    "{% for n in none %}{% endfor %}",
    "{% for a, b in [[1, 2, 3]] %}{% endfor %}",
    # macros and call
    "{% macro m(a, b=a ~ 'x', c=none) %}{{ a }}{{ b }}{{ c }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, c=3) }}|{{ m(1, 2, 3, 4, 5) }}|{{ m(1, z=9) }}|{{ m() }}",
    "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}",
    "{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}",
    "{% macro m() %}{{ v }}{% endmacro %}{% for v in [1, 2] %}[{{ m() }}]{% endfor %}",
    "{% macro w(x) %}[{{ caller(x) }}]{% endmacro %}{% call(y) w(5) %}got {{ y }}{% endcall %}",
    "{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}body{% endcall %}",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "{% macro m() %}x{% endmacro %}{{ m.name }}",
    # tests
    "{{ 1 is odd }}{{ 2 is even }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is iterable }}{{ 1 is iterable }}{{ [] is sequence }}{{ {} is sequence }}",
    "{{ 1 is number }}{{ true is number }}{{ 1 is integer }}{{ true is integer }}{{ 1.0 is float }}{{ true is boolean }}{{ 1 is boolean }}{{ none is none }}{{ 0 is none }}",
    "{{ 3 is divisibleby 3 }}{{ 3 is divisibleby(2) }}{{ 'a' is equalto 'a' }}{{ 2 is gt 1 }}{{ 1 is lt 1 }}{{ 'a' is in 'abc' }}{{ 1 is ne 2 }}{{ 1 is eq 1 }}{{ 1 is sameas 1 }}{{ none is sameas none }}",
    "{{ x is defined }}{{ x is undefined }}{{ n is defined }}{{ d.a is defined }}{{ d.b is defined }}{{ x is none }}{{ x is iterable }}{{ x is sequence }}",
    "{{ 'abc' is lower }}{{ 'ABC' is upper }}{{ 'Abc' is lower }}{{ range is callable }}{{ 'x' is callable }}{{ true is true }}{{ 1 is true }}{{ false is false }}",
    "{{ messages[0] is not string }}{{ messages[0].content is not none }}{{ not messages[0] is mapping }}",
    "{{ 'upper' is filter }}{{ 'nope' is filter }}{{ 'odd' is test }}",
    # filters
    "{{ '  x ' | trim }}|{{ 'x--' | trim('-') }}|{{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\u3000wide\\u00a0' | trim }}",
    "{{ 'a' | upper }}{{ 'A b' | lower }}{{ 'hello wORLD-foo(bar' | title }}|{{ 'hELLO world' | capitalize }}|{{ 'Gr\u00fc\u00dfe' | upper }}|{{ '\u00c9COLE' | lower }}",
    "{{ 'abc' | length }}|{{ 'h\u00e9llo' | length }}|{{ d | length }}|{{ [1, [2]] | count }}|{{ undefined_name | length }}",
    "{{ 1 | length }}",
    "{{ ['a', 'b'] | join }}|{{ [1, 2] | join(', ') }}|{{ messages | map(attribute='role') | join('/') }}|{{ messages | join(',', attribute='role') }}",
    "{{ 'aXbX' | replace('X', 'y') }}|{{ 'aXbX' | replace('X', 'y', 1) }}|{{ 'abc' | replace('', '-') }}|{{ '<a>' | safe }}",
    "{{ x | default('d') }}|{{ none | default('d') }}|{{ '' | default('d', true) }}|{{ 0 | d('zero', boolean=true) }}|{{ 'v' | default('d') }}",
    "{{ [3, 4] | first }}|{{ [3, 4] | last }}|{{ 'abc' | first }}|{{ [] | first }}|{{ 'abc' | list }}|{{ d | list }}|{{ undefined_name | list }}",
    "{{ 12 | string }}|{{ none | string }}|{{ [1] | string }}|{{ '12' | int + 1 }}|{{ 'x' | int }}|{{ 3.7 | int }}|{{ '3.5' | int }}|{{ ' 42 ' | int }}|{{ 'ff' | int(base=16) }}|{{ 'x' | int(7) }}",
    "{{ '3.5' | float }}|{{ 'x' | float }}|{{ 2 | float }}|{{ -3 | abs }}|{{ -2.5 | abs }}|{{ 2.567 | round(2) }}|{{ 2.5 | round }}|{{ 3.5 | round }}|{{ 2.1 | round(method='ceil') }}|{{ 2.9 | round(0, 'floor') }}",
    "{{ d | items | list }}|{{ undefined_name | items | list }}|{% for k, v in d | items %}{{ k }}{% endfor %}",
    "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|{{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | list }}|{{ messages | selectattr('content') | list | length }}|{{ messages | selectattr('tool_calls', 'defined') | list | length }}|{{ messages | selectattr('tool_calls', 'undefined') | list | length }}",
    "{{ [1, 2, 3, 4] | select('odd') | list }}|{{ [1, 2, 3, 4] | reject('odd') | list }}|{{ [0, 1, '', 'a'] | select | list }}|{{ [1, 2, 3] | select('gt', 1) | list }}|{{ [1, 2] | map('string') | join('-') }}",
    "{{ messages | map(attribute='tool_calls') | list | length }}|{{ messages | map(attribute='missing', default='-') | join }}|{{ messages[2].tool_calls | map(attribute='function.name') | list }}|{{ [[1, 2], [3]] | map(attribute='0') | list }}",
    "{{ nums | sort }}|{{ words | sort }}|{{ words | sort(case_sensitive=true) }}|{{ nums | sort(reverse=true) }}|{{ messages | sort(attribute='role') | map(attribute='role') | join(',') }}",
    "{{ words | unique | list }}|{{ nums | max }}|{{ nums | min }}|{{ words | max }}|{{ nums | sum }}|{{ [] | max }}|{{ messages[2].tool_calls | sum(attribute='x', start=0) if false else 's' }}",
    "{{ d | dictsort }}|{{ {'b': 1, 'A': 2, 'a': 3} | dictsort }}|{{ {'b': 2, 'a': 1} | dictsort(by='value', reverse=true) }}",
    "{{ nums | reverse | list }}|{{ 'abc' | reverse }}|{{ [1, 2, 3, 4, 5] | batch(2) | list }}|{{ [1, 2, 3] | batch(2, 'x') | list }}",
    "{{ 'a\\nb\\n' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x\\ny' | indent('> ') }}",
    "{{ '%s-%d' | format('x', 3) }}|{{ '%(n)s' | format(n=1) }}|{{ 'ab' | center(6) }}|{{ 'Hello World, a_b' | wordcount }}|{{ '<&\"\\'>' | e }}|{{ 'a long sentence here' | truncate(9, leeway=0) }}",
    "{{ d | attr('items') is defined }}|{{ d | attr('a') }}|",
    "{{ x | nonexistent_filter }}",
    "{{ x is nonexistent_test }}",
    # tojson as transformers defines it
    "{{ [1, 2] | tojson }}|{{ {'a': {'b': 1}} | tojson(indent=2) }}|{{ 'caf\u00e9\\n\\u0001\"' | tojson }}|{{ 1.0 | tojson }}|{{ 1e100 | tojson }}|{{ none | tojson }}|{{ (1, 2) | tojson }}",
    "{{ {1: 'a', none: 2, true: 3, 1.5: 4} | tojson }}|{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}|{{ [1, {'x': 2}] | tojson(separators=(',', ':')) }}|{{ {'a': [], 'b': {}} | tojson(indent=2) }}|{{ {'a': [1]} | tojson(indent='\\t') }}",
    "{{ 'caf\u00e9 \U0001F600' | tojson(ensure_ascii=true) }}|{{ 'x' | tojson(4) }}|{{ tools | tojson }}|{{ messages[2].tool_calls[0].function.arguments | tojson }}",
    "{{ tools[0] | tojson(indent=4) }}",
    "{{ x | tojson }}",
    "{{ [0.5, 100.0, 1e16, -0.0, 2.5e-8] | tojson }}",
    # string methods
    "{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}|{{ 'a\\nb\\r\\nc'.splitlines() }}|{{ ''.split() }}",
    "{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'abc'.startswith('b') }}|{{ 'hello world'.title() }}|{{ \"they're bill's\".title() }}|{{ 'hELLO'.capitalize() }}",
    "{{ 'a-b-c'.replace('-', '+') }}|{{ 'a-b-c'.replace('-', '+', 1) }}|{{ 'abcabc'.count('b') }}|{{ 'abc'.find('c') }}|{{ 'abc'.find('z') }}|{{ 'h\u00e9llo'.find('l') }}|{{ 'abcb'.rfind('b') }}",
    "{{ '-'.join(['a', 'b']) }}|{{ '{} and {}'.format('x', 1) }}|{{ '{0}{name}{0}'.format('a', name='b') }}|{{ '{:>5}|{:<4}|{:^5}|{:.2f}'.format('r', 'l', 'c', 3.14159) }}|{{ '{{}}'.format() }}",
    "{{ '12'.isdigit() }}{{ 'ab'.isalpha() }}{{ 'a1'.isalnum() }}{{ ' '.isspace() }}{{ 'ab'.islower() }}{{ 'AB'.isupper() }}{{ ''.isdigit() }}",
    "{{ 'prefix_x'.removeprefix('prefix_') }}|{{ 'x.txt'.removesuffix('.txt') }}|{{ '7'.zfill(3) }}|{{ 'ab'.ljust(4, '.') }}|{{ 'ab'.rjust(4) }}|{{ 'abc'.center(7, '*') }}|{{ 'a=b=c'.partition('=') }}|{{ 'a=b=c'.rpartition('=') }}",
    "{{ 'abc'.upper() }}{{ 'ABC'.lower() }}{{ '  x'.lstrip() }}|{{ 'x  '.rstrip() }}|{{ 'abc'.index('c') }}",
    "{{ 'abc'.index('z') }}",
    "{{ 'a'.split('') }}",
    # dict and list methods
    "{{ d.get('a') }}|{{ d.get('zz', 'dflt') }}|{{ d.get('zz') }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.items() | list }}",
    "{% for k, v in tools[0].function.parameters.properties.items() %}{{ k }}:{{ v.type }}{% endfor %}",
    "{{ nums.index(1) }}|{{ nums.count(3) }}|{{ (1, 2).index(2) }}",
    "{{ nums.append(4) }}",
    "{{ d.pop('a') }}",
    "{{ d.update is defined }}",
    # globals
    "{{ raise_exception('Only user and assistant roles are supported!') }}",
    "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with the user, not ' ~ messages[0].role) }}{% endif %}",
    "{{ strftime_now('%Y-%m-%d %d %b %Y %H:%M') }}",
    "{{ dict(a=1, b=2) }}|{{ dict([('x', 1)]) }}|{{ namespace is callable }}",
    "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}|{% set j = joiner('+') %}{% for i in [1, 2, 3] %}{{ j() }}{{ i }}{% endfor %}",
    "{{ undefined_function() }}",
    "{{ 'str'() }}",
    "{% generation %}tracked {{ 1 }}{% endgeneration %} after",
    # Markup (|safe, |escape) and generators (map, select, ...), as jinja2 has them
    "{{ ('<b>' | safe) + '<i>' }}|{{ '<i>' + ('<b>' | safe) }}|{{ ('a' | safe) ~ '<' }}|{{ ('%s' | safe) % '<' }}|{{ '<' | e }}|{{ '<' | e | e }}|{{ '<' | forceescape | forceescape }}",
    "{{ ('<x>' | safe).upper() + '&' }}|{{ ('a,<' | safe).split(',') }}|{{ ['<' | safe] }}|{{ ('<' | safe) | trim + '<' }}|{{ ('<' | safe) is escaped }}|{{ '<' is escaped }}|{{ ('<' | safe) == '<' }}",
    "{{ 'Use ' | safe + tools[0].function.name + ' ' | safe + tools[0].function | tojson }}",
    "{{ (messages | selectattr('role', 'eq', 'user')) is iterable }}|{{ (nums | select) is sequence }}|{% if [] | select %}always true{% endif %}|{{ none | map('upper') | list }}|{{ none | selectattr('x') | list }}",
    "{% set g = nums | map('string') %}{{ g | list }}{{ g | list }}|{{ nums | map('string') | first }}|{{ (nums | select)[0] }}|{{ 1 in nums | select }}|{{ d | items | list }}",
    "{{ nums | select | length }}",
    "{{ nums | select('odd') | tojson }}",
    "{{ nums | select | last }}",
    "{{ nums | reverse | tojson }}",
    "{% if false %}{{ x | no_such_filter }}{{ x is no_such_test }}{% endif %}{{ 'fine' if true else x | no_such_filter }}",
    "{% if true %}{{ x | no_such_filter }}{% endif %}",
    "{% if true %}{% for i in [1] %}{{ i | no_such_filter }}{% endfor %}{% endif %}",
    # syntax errors
    "{% if %}",
    "{% for x in %}{% endfor %}",
    "{{ 1 + }}",
    "{% if true %}never closed",
    "{% endif %}",
    "{% unknown_tag %}",
    "{{ 'unterminated }}",
    "{# unterminated comment",
    "{{ (1, 2 }}",
    "{% break %}",
    "{{ a.b.c | upper ) }}",
]


def main():
    env = make_environment()
    cases = []
    for template in CASES:
        case = {"template": template}
        try:
            case["output"] = env.from_string(template).render(**CONTEXT)
        except jinja2.exceptions.TemplateSyntaxError as error:
            case["error"] = "syntax: " + str(error)
        except Exception as error:  # what jinja2 raises is the reference, whatever its type
            case["error"] = f"{type(error).__name__}: {error}"
        cases.append(case)
    json.dump({"generator": "scripts/goldens/jinja_goldens.py", "jinja2_version": jinja2.__version__,
               "now": "2024-07-26T12:00:00", "context": CONTEXT, "cases": cases},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
