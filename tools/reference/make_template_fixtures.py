#!/usr/bin/env python3
"""Render chat templates with transformers' own Jinja machinery, as golden fixtures for Day0.

Runs where transformers (5.17) and jinja2 are installed; no network and no model weights are
needed. For every `*.jinja` in --templates and every standard context (below) it calls
`transformers.utils.chat_template_utils.render_jinja_template`, the function that
`apply_chat_template` calls, so the Jinja environment (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, the `generation` tag), the `tojson` filter and the
`raise_exception` / `strftime_now` globals are exactly those of transformers.

`strftime_now` is made deterministic: the module's clock is replaced by a fixed date (checked
by rendering a probe); Day0's tests give its interpreter the same fixed clock.

The variables each template really receives (whatever render_jinja_template adds, e.g.
`tools=None`, `documents=None`) are captured at `Template.render` and written as the context
files, so Day0 renders with exactly the same variables.

It also renders a list of small feature templates (one behaviour each: printing of values,
loop variables, filters, tests, whitespace control, errors) in the same environment.

Outputs (under --out):
  expected/contexts/<context>.json   the variables the template receives
  expected/<template-stem>.json      {context: {"output": text} | {"error": {"type", "message"}}}
  expected/features.json             [{name, template, context, output | error}]
  expected/meta.json                 versions, the fixed clock
  chat_template_utils.py             transformers' source, for reading (not for the repo)

Usage: python3 make_template_fixtures.py --templates tests/data/chat_templates --out OUTDIR
"""

import argparse
import datetime as _dt
import inspect
import json
import os
import sys
import types

FIXED_NOW = _dt.datetime(2025, 3, 7, 9, 4, 5)
BOS = "<|bos|>"
EOS = "<|eos|>"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
                "days": {"type": "integer", "description": "Forecast days"},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for"},
                "max_results": {"type": "number", "description": "At most this many"},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Filters"},
            },
            "required": ["query"],
        },
    },
}

USER1 = {"role": "user", "content": "Hello! Who are you?"}
ASSIST1 = {"role": "assistant", "content": "I am a helpful assistant."}
USER2 = {"role": "user", "content": "What is 2 + 2? Answer with \"quotes\" & <tags>, please: 日本語 ✓"}
SYSTEM = {"role": "system", "content": "You are a concise assistant.\nAnswer briefly."}
TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "id": "call0w8x1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius", "days": 2}},
        }
    ],
}
TOOL_RESULT = {"role": "tool", "tool_call_id": "call0w8x1", "name": "get_weather", "content": "{\"temperature\": 21.5, \"sky\": \"clear\"}"}

# name -> keyword arguments of render_jinja_template (besides chat_template, bos/eos).
CONTEXTS = {
    "single_turn": dict(messages=[USER1], add_generation_prompt=True),
    "single_turn_no_gen": dict(messages=[USER1], add_generation_prompt=False),
    "multi_turn": dict(messages=[USER1, ASSIST1, USER2], add_generation_prompt=True),
    "system_prompt": dict(messages=[SYSTEM, USER1, ASSIST1, USER2], add_generation_prompt=True),
    "system_no_gen": dict(messages=[SYSTEM, USER1, ASSIST1], add_generation_prompt=False),
    "reasoning": dict(
        messages=[
            USER1,
            {"role": "assistant", "content": "I am Day0's assistant.", "reasoning_content": "The user asks who I am.\nKeep it short."},
            USER2,
        ],
        add_generation_prompt=True,
    ),
    "reasoning_last": dict(
        messages=[
            SYSTEM,
            USER2,
            {"role": "assistant", "content": "4", "reasoning_content": "2 + 2 = 4."},
        ],
        add_generation_prompt=False,
    ),
    "thinking_field": dict(
        messages=[USER2, {"role": "assistant", "content": "4", "thinking": "Simple arithmetic: 4."}],
        add_generation_prompt=False,
    ),
    "empty_tools": dict(messages=[USER1], tools=[], add_generation_prompt=True),
    "tools": dict(
        messages=[SYSTEM, {"role": "user", "content": "Weather in Zürich?"}, TOOL_CALL, TOOL_RESULT],
        tools=[WEATHER_TOOL, SEARCH_TOOL],
        add_generation_prompt=True,
    ),
    "tools_final_answer": dict(
        messages=[
            {"role": "user", "content": "Weather in Zürich?"},
            TOOL_CALL,
            TOOL_RESULT,
            {"role": "assistant", "content": "It is 21.5 °C and clear."},
            {"role": "user", "content": "Thanks!"},
        ],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
    ),
    "content_parts": dict(
        messages=[{"role": "user", "content": [{"type": "text", "text": "Describe this."}, {"type": "text", "text": "Briefly."}]}],
        add_generation_prompt=True,
    ),
    "enable_thinking_false": dict(messages=[USER1, ASSIST1, USER2], add_generation_prompt=True, enable_thinking=False),
    # Extra variables some templates read (firefunction's `functions` and `datetime`).
    "extra_variables": dict(
        messages=[SYSTEM, USER1],
        add_generation_prompt=True,
        functions=json.dumps([WEATHER_TOOL["function"]], ensure_ascii=False, indent=2),
        datetime="2025-03-07",
        reasoning_effort="high",
        model_identity="You are Day0's test model.",
    ),
}

# Feature templates: (name, template, variables). Rendered in transformers' environment.
FEATURES = [
    # Printing of values, as Python's str() does.
    ("print_list", "{{ [1, 'a', \"b'c\", 2.5, true, none, [ ], {'k': 1}] }}", {}),
    ("print_dict", "{{ {'a': 1, 'b': [1, 2], 'c': {'d': none}} }}", {}),
    ("print_tuple", "{{ (1, 'x') }}|{{ (1,) }}|{{ () }}", {}),
    ("print_bools", "{{ true }} {{ false }} {{ none }} {{ True }} {{ None }}", {}),
    ("print_floats", "{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 123456789.123 }} {{ -0.0 }} {{ 2.5e300 * 1e10 }}", {}),
    ("print_floats_ctx", "{{ f }} {{ g }} {{ h }} {{ f * 3 }}", {"f": 21.5, "g": 1e-7, "h": 3.0}),
    ("print_string_escapes", "{{ ['a\\nb', 'tab\\t', 'q\"', \"s'\", 'both\\'\"', 'back\\\\slash', 'uni ü', '\\x01'] }}", {}),
    ("print_nested_ctx", "{{ messages }}", {"messages": [{"role": "user", "content": "hi", "n": 1.25, "ok": True, "x": None}]}),
    ("print_undefined", "[{{ nothing }}][{{ nothing is defined }}]", {}),
    ("print_int_big", "{{ 2 ** 62 }} {{ 9007199254740993 }} {{ -17 }}", {}),
    # Arithmetic.
    ("arith_int", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 6 / 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1 + 2 * 3 - 4 }}", {}),
    ("arith_float", "{{ 7.5 // 2 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }} {{ 1 + 1.5 }} {{ 2 ** 0.5 }} {{ 10 / 4 }}", {}),
    ("arith_unary", "{{ -3 }} {{ +3 }} {{ - -3 }} {{ -(2 + 3) }} {{ not true }}", {}),
    ("arith_bool", "{{ true + 1 }} {{ true * 3 }}", {}),
    ("arith_div_zero", "{{ 1 // 0 }}", {}),
    ("arith_div_zero_float", "{{ 1 / 0 }}", {}),
    ("arith_string_mul", "{{ 'ab' * 3 }}|{{ 3 * '-' }}|{{ [1] * 2 }}", {}),
    ("arith_list_add", "{{ [1, 2] + [3] }} {{ 'a' + 'b' }}", {}),
    ("arith_type_error", "{{ 'a' + 1 }}", {}),
    ("arith_pow_precedence", "{{ -2 ** 2 }} {{ 2 ** 3 ** 2 }}", {}),
    ("concat_tilde", "{{ 1 ~ 'a' ~ none ~ true ~ [1] ~ 2.0 }}", {}),
    ("concat_undefined", "[{{ 'a' ~ missing ~ 'b' }}]", {}),
    # Comparisons and logic.
    ("compare_mixed", "{{ 1 == 1.0 }} {{ 1 == '1' }} {{ true == 1 }} {{ none == none }} {{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }} {{ 'a' < 'b' }} {{ 2 > 1.5 }} {{ 1 != 2 }}", {}),
    ("compare_chain", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 < 2 == 2 }}", {}),
    ("compare_type_error", "{{ 1 < 'a' }}", {}),
    ("logic_values", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ '' or [] }} {{ none and 1 }} {{ [] or 0 }}", {}),
    ("logic_truthiness", "{% for v in [0, 1, '', 'a', [], [0], {}, {'a': 1}, none, 0.0, 2.5, false, true] %}{{ 'T' if v else 'F' }}{% endfor %}", {}),
    ("in_operator", "{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 1 in (1, 2) }}", {}),
    ("in_type_error", "{{ 1 in 'abc' }}", {}),
    ("inline_if", "{{ 'yes' if x else 'no' }} {{ 'only' if false }}|{{ 'a' if x is defined else 'b' }}", {"x": 1}),
    # Strings: indexing, slicing, methods.
    ("string_index_slice", "{{ s[0] }} {{ s[-1] }} {{ s[1:3] }} {{ s[:2] }} {{ s[2:] }} {{ s[::-1] }} {{ s[::2] }} {{ s[-3:-1] }} {{ s[10:] }}", {"s": "héllo"}),
    ("string_index_error", "{{ s[10] }}", {"s": "abc"}),
    ("string_methods", "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ s.capitalize() }}", {"s": "  hELLo wORLD  "}),
    ("string_strip_chars", "{{ s.strip('xy') }}|{{ s.lstrip('x') }}|{{ s.rstrip('y') }}|{{ '\\n\\nab\\n'.strip('\\n') }}", {"s": "xyxabcyx"}),
    ("string_split", "{{ s.split() }} {{ s.split(',') }} {{ s.split(',', 1) }} {{ 'a,b,,c'.split(',') }} {{ s.rsplit(',', 1) }} {{ ''.split(',') }} {{ '  a  b '.split() }}", {"s": "a,b c,d"}),
    ("string_split_empty_sep", "{{ 'abc'.split('') }}", {}),
    ("string_startswith", "{{ s.startswith('he') }} {{ s.endswith('lo') }} {{ s.startswith(('x', 'h')) }} {{ s.find('l') }} {{ s.find('z') }} {{ s.rfind('l') }} {{ s.count('l') }} {{ s.index('e') }}", {"s": "hello"}),
    ("string_replace", "{{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 1) }} {{ s | replace('o', '0') }} {{ s | replace('l', '', 1) }}", {"s": "hello world"}),
    ("string_predicates", "{{ '123'.isdigit() }} {{ '12a'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'ab1'.isalnum() }} {{ '  '.isspace() }} {{ 'ABC'.isupper() }} {{ 'abc'.islower() }}", {}),
    ("string_format_method", "{{ '{} and {}'.format('a', 1) }} {{ '{0}{1}{0}'.format('x', 'y') }} {{ '{name}!'.format(name='n') }}", {}),
    ("string_percent", "{{ '%s-%d' % ('a', 3) }} {{ '%s' % 'x' }} {{ '%05.2f' % 3.14159 }} {{ '%r' % 'q' }}", {}),
    ("string_join_splitlines", "{{ '\\n'.join(['a', 'b']) }}|{{ 'a\\nb\\r\\nc'.splitlines() }}|{{ '-'.join('abc') }}", {}),
    ("string_zfill_center", "{{ '7'.zfill(3) }}|{{ 'ab'.center(6, '*') }}|{{ 'ab'.ljust(4, '.') }}|{{ 'ab'.rjust(4) }}", {}),
    ("string_partition", "{{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }} {{ 'Hello'.swapcase() }}", {}),
    ("string_removeprefix", "{{ 'prefix-x'.removeprefix('prefix-') }} {{ 'x.txt'.removesuffix('.txt') }}", {}),
    ("string_unicode_len", "{{ s | length }} {{ s[1] }} {{ s | upper }}", {"s": "ñü日本🎉"}),
    ("string_escape_seqs", "{{ 'a\\tb\\\\c\\'d\\u00e9\\x41' }}", {}),
    # Lists and dicts.
    ("list_index_slice", "{{ l[0] }} {{ l[-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l | length }}", {"l": [1, 2, 3, 4]}),
    ("list_index_out_of_range", "[{{ l[10] }}]", {"l": [1]}),
    ("list_methods_read", "{{ l.index(2) }} {{ l.count(1) }}", {"l": [1, 2, 1]}),
    ("list_append_sandbox", "{% set l = [1] %}{{ l.append(2) }}{{ l }}", {}),
    ("list_pop_sandbox", "{% set l = [1, 2] %}{{ l.pop(0) }}{{ l }}", {}),
    ("dict_access", "{{ d.a }} {{ d['b'] }} {{ d.get('c', 'dflt') }} {{ d.get('a') }} [{{ d.missing }}] {{ d.get('zz') }}", {"d": {"a": 1, "b": "two"}}),
    ("dict_methods", "{{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }} {{ d | list }}", {"d": {"x": 1, "y": [2]}}),
    ("dict_items_loop", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("dict_attr_vs_item", "{{ d.items is callable }} {{ d['items'] }}", {"d": {"items": "mine"}}),
    ("attr_on_none", "{{ x.y }}", {"x": None}),
    ("attr_on_undefined", "{{ nothing.y }}", {}),
    ("attr_of_undefined_attr", "[{{ d.nope }}]", {"d": {}}),
    ("index_undefined_chain", "{{ d.nope.deeper }}", {"d": {}}),
    ("undefined_in_test", "{{ d.nope is defined }} {{ d.nope is none }} {{ nothing | default('D') }} {{ none | default('D') }} {{ none | default('D', true) }} {{ '' | d('E', true) }}", {"d": {}}),
    ("undefined_iteration", "[{% for x in nothing %}{{ x }}{% endfor %}]", {}),
    ("undefined_length", "{{ nothing | length }}", {}),
    ("undefined_compare", "{{ nothing == none }} {{ not nothing }}", {}),
    ("undefined_add_error", "{{ nothing + 1 }}", {}),
    # Loops.
    ("loop_vars", "{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ x }}|{% endfor %}", {}),
    ("loop_prev_next", "{% for x in [1, 2, 3] %}[{{ loop.previtem }}-{{ loop.nextitem }}]{{ loop.previtem is defined }}{% endfor %}", {}),
    ("loop_cycle", "{% for x in range(4) %}{{ loop.cycle('odd', 'even') }}{% endfor %}", {}),
    ("loop_changed", "{% for x in [1, 1, 2] %}{{ loop.changed(x) }}{% endfor %}", {}),
    ("loop_else", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}|{% for x in [1] %}{{ x }}{% else %}no{% endfor %}", {}),
    ("loop_filter_if", "{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }}{{ loop.last }},{% endfor %}", {}),
    ("loop_filter_on_iterable", "{% for x in ['b', 'a', 'c'] | sort %}{{ x }}{% endfor %}", {}),
    ("loop_tuple_unpack", "{% for a, b in [(1, 2), [3, 4]] %}{{ a }}{{ b }}{% endfor %}", {}),
    ("loop_unpack_error", "{% for a, b in [(1, 2, 3)] %}{{ a }}{% endfor %}", {}),
    ("loop_nested_outer", "{% for i in [1, 2] %}{% set outer = loop %}{% for j in [1, 2] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}", {}),
    ("loop_scoping", "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("loop_break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", {}),
    ("loop_dict_iter", "{% for k in d %}{{ k }}{% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("loop_string_iter", "{% for c in 'héy' %}[{{ c }}]{% endfor %}", {}),
    ("loop_over_none", "{% for x in none %}{{ x }}{% endfor %}", {}),
    ("loop_over_int", "{% for x in 3 %}{{ x }}{% endfor %}", {}),
    ("loop_recursive", "{% for item in tree recursive %}{{ item.n }}{% if item.c %}({{ loop(item.c) }}){% endif %}{% endfor %}", {"tree": [{"n": "a", "c": [{"n": "b", "c": []}]}, {"n": "c"}]}),
    ("loop_variable_leak", "{% for x in [1, 2] %}{% endfor %}[{{ x }}]", {}),
    ("range_forms", "{{ range(3) | list }} {{ range(1, 4) | list }} {{ range(10, 0, -3) | list }} {{ range(0) | list }}", {}),
    ("range_too_big", "{{ range(200000) | length }}", {}),
    # Set, namespace, with.
    ("set_multiple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", {}),
    ("set_block", "{% set x %}  hello {{ 1 + 1 }}\n{% endset %}[{{ x }}]", {}),
    ("set_block_filter", "{% set x | upper | trim %}  hello  {% endset %}[{{ x }}]", {}),
    ("namespace_basic", "{% set ns = namespace(a=1, b='x') %}{% for i in [1, 2, 3] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.b }}", {}),
    ("namespace_print", "{% set ns = namespace(a=1) %}{{ ns.missing is defined }}", {}),
    ("namespace_dict_arg", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}", {}),
    ("set_attr_non_namespace", "{% set d = {} %}{% set d.x = 1 %}", {}),
    ("with_block", "{% set a = 1 %}{% with a = 2, b = 3 %}{{ a }}{{ b }}{% endwith %}{{ a }}", {}),
    # Macros and call.
    ("macro_defaults", "{% macro m(a, b='B', c=none) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }}|{{ m(1, 2, 3) }}|{{ m(a=5, c='C') }}", {}),
    ("macro_varargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }}", {}),
    ("macro_too_many_args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", {}),
    ("macro_unknown_kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, z=2) }}", {}),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}", {}),
    ("macro_call_caller", "{% macro wrap(t) %}<{{ t }}>{{ caller() }}</{{ t }}>{% endmacro %}{% call wrap('b') %}inner {{ 1 }}{% endcall %}", {}),
    ("macro_call_args", "{% macro list(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) list([1, 2]) %}<{{ x }}>{% endcall %}", {}),
    ("macro_recursion", "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}", {}),
    ("macro_scope", "{% set g = 'G' %}{% macro m() %}{{ g }}{% set g = 'L' %}{{ g }}{% endmacro %}{{ m() }}{{ g }}", {}),
    ("macro_returns_string", "{% macro m() %}  x  {% endmacro %}[{{ m() | trim }}]{{ m() is string }}{{ (m() ~ 'y') | length }}", {}),
    ("macro_attrs", "{% macro m(a, b=1) %}{% endmacro %}{{ m.name }} {{ m.arguments }}", {}),
    ("macro_defined_later", "{{ m() }}{% macro m() %}M{% endmacro %}", {}),
    # Filter blocks, raw, comments, whitespace control.
    ("filter_block", "{% filter upper %}abc {{ 'd' }}{% endfilter %}", {}),
    ("raw_block", "{% raw %}{{ not evaluated }}{% if %}{% endraw %}", {}),
    ("raw_block_ws", "a\n  {%- raw -%}  x  {%- endraw -%}  \nb", {}),
    ("comment", "a{# comment {{ x }} #}b\n  {#- trimmed -#}  c", {}),
    ("trim_blocks", "{% if true %}\nA\n{% endif %}\nB\n    {% if true %}C{% endif %}\n", {}),
    ("lstrip_blocks", "  {% if true %}x{% endif %}\n  y {% if true %}z{% endif %}", {}),
    ("ws_minus", "a  {{- 'b' -}}  c\n  {%- if true -%}\n  d  {%- endif %}  e", {}),
    ("ws_plus", "  {%+ if true %}x{% endif +%}\ny", {}),
    ("ws_var_no_trim", "{{ 'a' }}\n{{ 'b' }}\n", {}),
    ("ws_comment_trim_blocks", "{# c #}\nx\n  {# d #}\ny", {}),
    ("trailing_newline", "x\n", {}),
    ("crlf_newlines", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", {}),
    ("ws_tab_lstrip", "\t{% if true %}t{% endif %}", {}),
    # Tests.
    ("tests_types", "{% for v in [none, true, 1, 1.5, 'a', [1], {'a': 1}] %}{{ v is none }}{{ v is boolean }}{{ v is integer }}{{ v is float }}{{ v is number }}{{ v is string }}{{ v is sequence }}{{ v is mapping }}{{ v is iterable }}{{ v is callable }};{% endfor %}", {}),
    ("tests_values", "{{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} {{ 2 is gt 1 }} {{ 2 is ge 2 }} {{ 1 is lt 2 }} {{ 1 is le 0 }} {{ 'a' is in 'abc' }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }}", {}),
    ("tests_case", "{{ 'abc' is lower }} {{ 'aBc' is lower }} {{ 'ABC' is upper }} {{ x is undefined }} {{ x is not defined }} {{ none is not none }} {{ 'x' is sameas 'x' }}", {}),
    ("tests_callable", "{{ raise_exception is callable }} {{ range is callable }} {{ 'a'.upper is callable }} {{ namespace is defined }}", {}),
    ("test_unknown", "{{ 1 is frobnicated }}", {}),
    ("test_unknown_in_if", "{% if false %}{{ 1 is frobnicated }}{% endif %}ok", {}),
    ("filter_unknown", "{{ 1 | frobnicate }}", {}),
    ("filter_unknown_in_if", "{% if false %}{{ 1 | frobnicate }}{% endif %}ok", {}),
    ("filter_unknown_in_if_in_for", "{% if false %}{% for x in [] %}{{ x | frobnicate }}{% endfor %}{% endif %}ok", {}),
    ("filter_unknown_in_inline_if", "{{ (1 | frobnicate) if false else 'ok' }}", {}),
    ("filter_unknown_in_if_reached", "{% if true %}{{ 1 | frobnicate }}{% endif %}", {}),
    # Filters.
    ("filter_tojson", "{{ v | tojson }}", {"v": {"a": [1, 2.5, None, True, "é\"<>&'\n\u2028"], "b": {}, "z": "x"}}),
    ("filter_tojson_args", "{{ v | tojson(indent=2) }}|{{ v | tojson(indent=4, sort_keys=true) }}|{{ v | tojson(separators=(',', ':')) }}|{{ v | tojson(ensure_ascii=true) }}", {"v": {"b": [1, {"c": "ü"}], "a": [], "e": {}}}),
    ("filter_tojson_scalars", "{{ 'x' | tojson }} {{ 1 | tojson }} {{ 1.0 | tojson }} {{ 1e20 | tojson }} {{ none | tojson }} {{ true | tojson }} {{ (1, 2) | tojson }} {{ 0.1 | tojson }}", {}),
    ("filter_tojson_indent_string", "{{ v | tojson(indent='\\t') }}", {"v": {"a": [1]}}),
    ("filter_tojson_undefined", "{{ nothing | tojson }}", {}),
    ("filter_trim", "[{{ '  a b \\n' | trim }}][{{ 'xxaxx' | trim('x') }}]", {}),
    ("filter_length_count", "{{ 'abc' | length }} {{ [1, 2] | count }} {{ {'a': 1} | length }}", {}),
    ("filter_join", "{{ [1, 'a', none] | join }} {{ ['a', 'b'] | join(', ') }} {{ users | join(', ', attribute='name') }} {{ 'abc' | join('-') }}", {"users": [{"name": "x"}, {"name": "y"}]}),
    ("filter_case", "{{ 'hello world' | upper }} {{ 'HeLLo' | lower }} {{ 'hello WORLD' | capitalize }} {{ 'hello wORLD-x y_z' | title }}", {}),
    ("filter_replace_count", "{{ 'aaa' | replace('a', 'b', 2) }}", {}),
    ("filter_items", "{% for k, v in d | items %}{{ k }}{{ v }}{% endfor %}", {"d": {"a": 1, "b": 2}}),
    ("filter_dictsort", "{% for k, v in d | dictsort %}{{ k }}{{ v }}{% endfor %}|{% for k, v in d | dictsort(reverse=true) %}{{ k }}{% endfor %}|{% for k, v in d | dictsort(by='value') %}{{ k }}{% endfor %}", {"d": {"b": 1, "a": 3, "C": 2}}),
    ("filter_list_first_last", "{{ 'abc' | list }} {{ [1, 2, 3] | first }} {{ [1, 2, 3] | last }} {{ [] | first }} {{ 'xyz' | first }}", {}),
    ("filter_default", "{{ x | default('a') }} {{ none | default('b') }} {{ false | default('c') }} {{ false | default('c', true) }} {{ y | d(0) }}", {"y": 5}),
    ("filter_indent", "[{{ 'a\\nb\\n\\nc' | indent }}][{{ 'a\\nb' | indent(2, true) }}][{{ 'a\\n\\nb\\n' | indent(2, blank=true) }}][{{ 'a\\nb' | indent('> ') }}]", {}),
    ("filter_map", "{{ users | map(attribute='name') | list }} {{ ['a', 'b'] | map('upper') | list }} {{ users | map(attribute='age', default=0) | list }} {{ [1, 2] | map('string') | join }}", {"users": [{"name": "x", "age": 3}, {"name": "y"}]}),
    ("filter_map_attr_missing", "{{ users | map(attribute='zz') | list }}", {"users": [{"name": "x"}]}),
    ("filter_select_reject", "{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3, 4] | reject('odd') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ [1, 5, 9] | select('gt', 4) | list }} {{ ['a', 'b'] | select('in', ['b']) | list }}", {}),
    ("filter_selectattr", "{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='c') | list }} {{ ms | rejectattr('role', 'eq', 'user') | list | length }} {{ ms | selectattr('flag') | list | length }} {{ ms | rejectattr('flag') | list | length }} {{ ms | selectattr('flag', 'defined') | list | length }}", {"ms": [{"role": "user", "c": 1, "flag": True}, {"role": "assistant", "c": 2}, {"role": "user", "c": 3, "flag": False}]}),
    ("filter_unique", "{{ [1, 2, 1, 3, 2] | unique | list }} {{ ['a', 'A', 'b'] | unique | list }} {{ ['a', 'A'] | unique(case_sensitive=true) | list }}", {}),
    ("filter_string_int_float", "{{ 1 | string }} {{ [1] | string }} {{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 4.9 | int }} {{ '3.5' | float }} {{ 2 | float }} {{ 'y' | float }} {{ '0x1A' | int(0, 16) }} {{ true | int }}", {}),
    ("filter_abs_round", "{{ -3 | abs }} {{ -2.5 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 2.9 | round(0, 'floor') }} {{ 7 | round }} {{ -2.5 | round }}", {}),
    ("filter_sort", "{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }} {{ [3, 1] | sort(reverse=true) }} {{ us | sort(attribute='n') | map(attribute='n') | list }}", {"us": [{"n": 2}, {"n": 1}]}),
    ("filter_reverse", "{{ [1, 2, 3] | reverse | list }} {{ 'abc' | reverse }}", {}),
    ("filter_batch_slice", "{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 'x') | list }} {{ [1, 2, 3, 4] | slice(2) | list }}", {}),
    ("filter_escape_safe", "{{ '<a href=\"x\">&\\'</a>' | e }} {{ '<b>' | escape }} {{ '<b>' | safe }} {{ ('<i>' | e) ~ '<u>' }} {{ '<b>' | forceescape }}", {}),
    ("filter_wordcount_misc", "{{ 'a b  c' | wordcount }} {{ 'hello' | center(9) }} {{ 'abcdefghij' | truncate(8) }} {{ 3 | filesizeformat }} {{ 'a b' | urlencode }} {{ [1, 5, 3] | max }} {{ [4, 2] | min }} {{ [1, 2.5] | sum }} {{ us | sum(attribute='n') }}", {"us": [{"n": 2}, {"n": 1}]}),
    ("filter_format", "{{ '%s=%d' | format('a', 3) }} {{ '%.3f' | format(3.14159) }} {{ '%(k)s' | format(k='v') }}", {}),
    ("filter_string_on_list_markup", "{{ ['<a>'] | join(', ') }} {{ ('<a>' | e) | join }}", {}),
    ("filter_attr", "{{ d | attr('a') }}|{{ d | attr('zz') }}|", {"d": {"a": 1}}),
    ("filter_groupby", "{% for g in us | groupby('k') %}{{ g.grouper }}:{{ g.list | length }};{% endfor %}", {"us": [{"k": "b"}, {"k": "a"}, {"k": "b"}]}),
    ("filter_pprint_striptags", "{{ 'a <b>x</b>  y' | striptags }}", {}),
    ("filter_with_undefined_args", "{{ 'abc' | replace(nothing, 'x') }}", {}),
    # Globals and errors.
    ("raise_exception", "{{ raise_exception('Only user and assistant roles are supported!') }}", {}),
    ("raise_exception_in_if", "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}fine", {"messages": [{"role": "system"}]}),
    ("strftime_now", "{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %-d %j %I %p %y %a %e') }}", {}),
    ("dict_global", "{{ dict(a=1, b='x') }} {{ dict({'c': 1}, d=2) }}", {}),
    ("lipsum_cycler_joiner", "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{% set j = joiner('|') %}{% for x in [1, 2] %}{{ j() }}{{ x }}{% endfor %}", {}),
    ("call_non_callable", "{{ 'abc'() }}", {}),
    ("call_undefined", "{{ nothing() }}", {}),
    ("unsafe_attribute", "{{ ''.__class__ }}", {}),
    ("method_unknown", "{{ 'abc'.nomethod() }}", {}),
    ("string_attribute_undefined", "[{{ 'abc'.nomethod }}]", {}),
    ("int_attribute", "[{{ (1).real }}] [{{ x.imag }}]", {"x": 1.5}),
    ("syntax_error_unclosed", "{% if true %}x", {}),
    ("syntax_error_bad_expr", "line1\nline2 {{ 1 + }}", {}),
    ("syntax_error_unknown_tag", "{% frobnicate %}", {}),
    ("syntax_error_endfor_mismatch", "{% for x in y %}{% endif %}", {}),
    ("syntax_error_unclosed_string", "{{ 'abc }}", {}),
    ("syntax_error_unclosed_comment", "{# abc", {}),
    ("syntax_error_unexpected_end", "{% endfor %}", {}),
    ("syntax_error_break_outside_loop", "{% break %}", {}),
    ("syntax_error_extends", "{% extends 'x' %}", {}),
    # Real-template idioms.
    ("idiom_role_check", "{% for m in messages %}{% if m['role'] == 'user' %}U:{{ m['content'] }}{% elif m.role == 'assistant' %}A:{{ m.content }}{% else %}?{% endif %}\n{% endfor %}", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "x", "content": ""}]}),
    ("idiom_last_user_index", "{% set ns = namespace(idx=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.idx = loop.index0 %}{% endif %}{% endfor %}{{ ns.idx }}", {"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}, {"role": "assistant"}]}),
    ("idiom_messages_slice", "{{ messages[1:] | length }} {{ (messages | selectattr('role', 'equalto', 'user') | list | last).content }}", {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u1"}, {"role": "user", "content": "u2"}]}),
    ("idiom_content_string_or_list", "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{% if p.type == 'text' %}{{ p.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}", {"messages": [{"content": "a"}, {"content": [{"type": "text", "text": "b"}, {"type": "image"}]}]}),
    ("idiom_think_split", "{% set c = content %}{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}", {"content": "<think>\nreason\n</think>\n\nanswer"}),
    ("idiom_tool_args", "{% for tc in m.tool_calls %}{% set f = tc.function if tc.function is defined else tc %}{{ f.name }}({% if f.arguments is string %}{{ f.arguments }}{% else %}{{ f.arguments | tojson }}{% endif %}){% for k, v in f.arguments.items() %} {{ k }}={{ v }}{% endfor %}{% endfor %}", {"m": {"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1, "b": "ü", "c": [1.5]}}}]}}),
    ("idiom_is_iterable_not_string", "{% for v in [[1], 'ab', {'a': 1}, 1] %}{{ v is iterable and v is not string and v is not mapping }}{% endfor %}", {}),
    ("idiom_set_in_if_scope", "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    ("idiom_loop_in_macro", "{% macro r(l) %}{% for x in l %}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}{% endmacro %}[{{ r([1, 2, 3]) }}]", {}),
    ("idiom_string_compare_none", "{{ none == 'a' }} {{ 'a' != none }} {{ none is none }}", {}),
    ("idiom_generation_tag", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}", {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}),
    ("idiom_tools_none", "{{ tools is none }} {{ tools is defined }} {% if tools %}T{% else %}F{% endif %}", {"tools": None}),
    ("idiom_chain_filters_args", "{{ messages | map(attribute='content') | map('trim') | map('upper') | join(' / ') }}", {"messages": [{"content": " a "}, {"content": "b "}]}),
    ("idiom_dict_literal_trailing_comma", "{% set d = {'a': 1, 'b': 2,} %}{% set l = [1, 2,] %}{{ d }}{{ l }}", {}),
    ("idiom_string_concat_multi", "{{ 'a' 'b' }} {{ 'c'\n'd' }}", {}),
    ("idiom_is_is", "{{ 1 is number is true }}", {}),
    ("idiom_filter_precedence", "{{ -1 | abs }} {{ 'a' ~ 'b' | upper }} {{ not 'x' | length }} {{ -2.5 | round }} {{ 1 - 1 | abs }}", {}),
    ("idiom_filter_precedence_error", "{{ 1 + 2 | string }}", {}),
    ("idiom_attribute_int_key", "{{ d[1] }} {{ l.0 }} {{ l['0'] is defined }}", {"d": {"1": "s"}, "l": [9]}),
    ("idiom_none_methods", "{{ none | string }} {{ none | lower }} {{ (none | string).upper() }}", {}),
    ("idiom_loop_length_filter", "{% for m in messages if m.role != 'system' %}{{ loop.length }}{{ loop.last }} {% endfor %}", {"messages": [{"role": "system"}, {"role": "user"}, {"role": "assistant"}]}),
    ("idiom_list_of_dict_contains", "{{ {'role': 'user'} in messages }} {{ 'user' in messages | map(attribute='role') }}", {"messages": [{"role": "user"}]}),
    ("idiom_bool_kwarg_string", "{% if enable_thinking is defined and enable_thinking is false %}off{% else %}on{% endif %}", {"enable_thinking": False}),
    ("idiom_int_key_dict_print", "{{ d }}", {"d": {"1": 1.5, "a b": [True]}}),
]


def install_fixed_clock(ctu):
    """Replaces the clock strftime_now reads with FIXED_NOW; returns how."""

    class FixedDateTime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return FIXED_NOW if tz is None else FIXED_NOW.replace(tzinfo=tz)

    how = []
    if getattr(ctu, "datetime", None) is _dt.datetime:
        ctu.datetime = FixedDateTime
        how.append("module datetime class")
    elif getattr(ctu, "datetime", None) is _dt:
        shim = types.ModuleType("datetime")
        shim.__dict__.update(_dt.__dict__)
        shim.datetime = FixedDateTime
        ctu.datetime = shim
        how.append("module datetime module")
    # Belt and braces: also override the global on every compiled template.
    original = ctu._compile_jinja_template

    def compile_with_clock(*args, **kwargs):
        template = original(*args, **kwargs)
        template.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
        return template

    ctu._compile_jinja_template = compile_with_clock
    how.append("template globals")
    return how, original


def describe_error(exc):
    return {"type": type(exc).__name__, "message": str(exc)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--templates", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import jinja2
    import jinja2.environment
    import transformers
    import transformers.utils.chat_template_utils as ctu

    out_expected = os.path.join(args.out, "expected")
    os.makedirs(os.path.join(out_expected, "contexts"), exist_ok=True)
    with open(os.path.join(args.out, "chat_template_utils.py"), "w") as f:
        f.write(inspect.getsource(ctu))
    print("transformers", transformers.__version__, "jinja2", jinja2.__version__)
    print(inspect.getsource(ctu._compile_jinja_template))

    how, original_compile = install_fixed_clock(ctu)
    print("fixed clock via:", how)

    captured = {}
    original_render = jinja2.environment.Template.render

    def capturing_render(self, *a, **kw):
        captured["vars"] = dict(*a, **kw)
        return original_render(self, *a, **kw)

    jinja2.environment.Template.render = capturing_render

    probe = ctu.render_jinja_template(
        conversations=[[USER1]], chat_template="{{ strftime_now('%Y-%m-%d %H:%M:%S') }}", bos_token=BOS, eos_token=EOS
    )
    probe_text = probe[0][0] if isinstance(probe, tuple) else probe[0]
    print("probe:", repr(probe_text), "kwargs seen:", sorted(captured.get("vars", {})))
    assert probe_text == FIXED_NOW.strftime("%Y-%m-%d %H:%M:%S"), probe_text

    # Contexts: render once with a template that uses nothing, to capture the variables.
    context_vars = {}
    for name, kwargs in CONTEXTS.items():
        captured.clear()
        ctu.render_jinja_template(conversations=[kwargs["messages"]], chat_template="x", bos_token=BOS, eos_token=EOS,
                                  **{k: v for k, v in kwargs.items() if k != "messages"})
        context_vars[name] = captured["vars"]
        with open(os.path.join(out_expected, "contexts", name + ".json"), "w") as f:
            json.dump(captured["vars"], f, ensure_ascii=False, indent=1)
            f.write("\n")

    templates = sorted(p for p in os.listdir(args.templates) if p.endswith(".jinja"))
    counts = {"output": 0, "error": 0}
    for tname in templates:
        with open(os.path.join(args.templates, tname), encoding="utf-8") as f:
            source = f.read()
        results = {}
        for cname, kwargs in CONTEXTS.items():
            captured.clear()
            try:
                rendered = ctu.render_jinja_template(
                    conversations=[kwargs["messages"]], chat_template=source, bos_token=BOS, eos_token=EOS,
                    **{k: v for k, v in kwargs.items() if k != "messages"})
                text = rendered[0][0] if isinstance(rendered, tuple) else rendered[0]
                if "vars" in captured and captured["vars"] != context_vars[cname]:
                    raise RuntimeError(f"{tname}/{cname}: template saw different variables")
                results[cname] = {"output": text}
                counts["output"] += 1
            except Exception as exc:  # the template itself failed: record how
                results[cname] = {"error": describe_error(exc)}
                counts["error"] += 1
        with open(os.path.join(out_expected, tname[: -len(".jinja")] + ".json"), "w") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)
            f.write("\n")
        errs = [c for c, r in results.items() if "error" in r]
        print(f"{tname}: {len(results) - len(errs)} rendered, errors: "
              + ", ".join(f"{c}={results[c]['error']['type']}" for c in errs))

    features = []
    for fname, source, variables in FEATURES:
        entry = {"name": fname, "template": source, "context": variables}
        try:
            entry["output"] = ctu._compile_jinja_template(source).render(**variables)
        except Exception as exc:
            entry["error"] = describe_error(exc)
        features.append(entry)
    with open(os.path.join(out_expected, "features.json"), "w") as f:
        json.dump(features, f, ensure_ascii=False, indent=1)
        f.write("\n")
    with open(os.path.join(out_expected, "meta.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "jinja2": jinja2.__version__,
                   "fixed_now": FIXED_NOW.isoformat(), "bos_token": BOS, "eos_token": EOS,
                   "python": sys.version.split()[0]}, f, indent=1)
        f.write("\n")
    print("templates:", len(templates), "contexts:", len(CONTEXTS), counts, "features:", len(features))


if __name__ == "__main__":
    main()
