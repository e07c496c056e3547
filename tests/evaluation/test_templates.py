"""The template sandbox bounds globals, filters and methods in size before they allocate, and in time at every call.

Hostile trial (issue 25): ``{{ lipsum(n=1000000, min=20, max=100)|length }}`` ran 75 s and reached 1.7 GB before it
was refused, because the limits covered the result of a call, not the call itself. Each case below used to build
gigabytes (or run for minutes) before a limit looked at it; now it is refused from a bound computed first. The
checks are on the error and on the memory the refused render allocated (tracemalloc), not on wall time.
"""

from __future__ import annotations

import tracemalloc

import pytest

from autorater_pipelines.evaluation.templates import BoundedEnvironment, RenderLimits, SecurityError

ENV = BoundedEnvironment()
LIMIT = 4_000_000

AMPLIFIERS = [
    ("{{ lipsum(n=1000000, min=20, max=100)|length }}", r"lipsum\(n=1000000, max=100\) would produce up to \d+"),
    ("{{ lipsum(n=1, max=10**9)|length }}", r"lipsum\(n=1, max=1000000000\) would produce up to"),
    ("{{ range(99999)|join(range(99999)|join)|length }}", r"filter 'join' would produce up to \d+ characters"),
    # 99,998 separators of 100 characters and the 488,885 digits of 0..99998
    ("{{ (range(99999)|list)|join('x' * 100)|length }}", r"filter 'join' would produce up to 10488685 characters"),
    ("{{ ('x' * 3000000)|join('y' * 3000)|length }}", r"filter 'join' would produce up to"),
    ("{{ ('x' * 3000000).join('y' * 3000000)|length }}", r"calling 'join' would produce up to"),
    ("{{ ('x' * 3000000)|replace('x', 'x' * 3000000)|length }}", r"filter 'replace' would produce up to 9{1}0{12}"),
    ("{{ ('x' * 3000000).replace('x', 'x' * 3000000)|length }}", r"calling 'replace' would produce up to"),
    ("{{ ('a' * 39000)|replace('a', 'b' * 100)|replace('b', 'c' * 100)|length }}", r"filter 'replace' would"),
    ("{{ ('\\t' * 3000000).expandtabs(3000000)|length }}", r"calling 'expandtabs' would produce up to"),
    ("{{ ('a' * 3000000).translate({97: 'x' * 3000000})|length }}", r"calling 'translate' would produce up to"),
    ("{{ ('x\\n' * 2000000)|indent(3000000)|length }}", r"filter 'indent' would produce up to"),
    ("{{ ('x ' * 2000000)|wordwrap(1)|length }}", r"filter 'wordwrap' would produce up to"),
    ("{{ ('x' * 3000000)|slice(3000000)|list|length }}", r"filter 'slice' would produce up to 6000000"),
    ("{{ '{:>{w}}'.format('x', w=3000000000)|length }}", r"str\.format: width or precision 3000000000 is larger"),
    ("{{ '{0:{1}}'.format('x', '3000000000')|length }}", r"str\.format: width or precision 3000000000 is larger"),
    ("{{ ('%*s' % (3000000000, 'x'))|length }}", r"'%' formatting: width or precision 3000000000 is larger"),
    ("{{ '%*s'|format(3000000000, 'x')|length }}", r"filter 'format': width or precision 3000000000 is larger"),
    ("{{ range(10**9)|length }}", r"range\(1000000000,\) has 1000000000 numbers, more than the 100000 loop"),
    (  # a list literal nested 6 deep holds 4e11 characters; printing it would build them
        "{% set a = 'x' * 3999999 %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}{% set c = [b,b,b,b,b,b,b,b,b,b] %}"
        "{% set d = [c,c,c,c,c,c,c,c,c,c] %}{{ d }}",
        r"printing a value would produce more than 4000000 characters",
    ),
    ("{% set a = 'x' * 3999999 %}{% set b = [a,a] %}{{ b ~ 'x' }}", r"'~' concatenation would produce more than"),
    ("{% set a = 'x' * 3999999 %}{{ [a, a]|tojson|length }}", r"filter 'tojson' would produce more than"),
    ("{% set a = ['x' * 3000000] %}{{ (a * 1000000)|length }}", r"repetition would produce more than"),
]


@pytest.mark.parametrize(("template", "message"), AMPLIFIERS, ids=[t[:60] for t, _ in AMPLIFIERS])
def test_an_amplifying_call_is_refused_before_it_allocates(template, message):
    tracemalloc.start()
    try:
        with pytest.raises(SecurityError, match=message):
            ENV.from_string(template).render()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The inputs the template builds itself (a 4 MB string at most, or a list of 100,000 numbers) are all it holds:
    # the result that would have taken gigabytes was never built.
    assert peak < 60 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_lipsum_of_a_million_paragraphs_is_refused_from_its_bound_not_by_the_time_limit():
    """The refusal comes from the size bound, before the first paragraph: with no time at all to render (a deadline
    already passed), the message is still the size one, since nothing ran long enough to reach a time check."""
    template = BoundedEnvironment(limits=RenderLimits(max_seconds=3600)).from_string(
        "{{ lipsum(n=1000000, min=20, max=100)|length }}"
    )
    with pytest.raises(SecurityError, match=rf"would produce up to 1412000000 characters, more than {LIMIT}$"):
        template.render()


def test_the_time_limit_is_checked_at_every_call_not_every_64_steps():
    """A handful of calls, each under every size bound, in a render whose time is up: refused by the time limit at
    the first call (it used to be looked at every 64th step only, so 63 slow calls ran first)."""
    env = BoundedEnvironment(limits=RenderLimits(max_seconds=0.0))
    with pytest.raises(SecurityError, match=r"the template took longer than 0 s to render"):
        env.from_string("{{ lipsum(n=1) }}").render()
    with pytest.raises(SecurityError, match=r"the template took longer than 0 s to render"):
        env.from_string("{{ s|replace('a', 'c') }}").render(s="ab")  # a variable: jinja folds constants early


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ range(5)|join(', ') }}", "0, 1, 2, 3, 4"),
        ("{{ ', '.join(['a', 'b']) }}", "a, b"),
        ("{{ 'a-b'|replace('-', ' and ') }}", "a and b"),
        ("{{ 'x\\ny'|indent(2, first=True) }}", "  x\n  y"),
        ("{{ '{:>5}|{:.2f}'.format('ab', 3.14159) }}", "   ab|3.14"),
        ("{{ '%-4s|' % 'ab' }}{{ '%*d'|format(3, 7) }}", "ab  |  7"),
        ("{{ 'a\\tb'.expandtabs(4) }}", "a   b"),
        ("{{ 'abc'.translate({97: 'AA'}) }}", "AAbc"),
        ("{{ [[1], [2, 3]]|sum(start=[]) }}", "[1, 2, 3]"),
        ("{{ range(7)|slice(3)|list }}", "[[0, 1, 2], [3, 4], [5, 6]]"),
        ("{{ range(5)|batch(2, 'x')|list }}", "[[0, 1], [2, 3], [4, 'x']]"),
        ("{{ lipsum(n=2, html=False)|wordcount > 20 }}", "True"),
        ("{% for i in range(3) %}{{ i }}{% endfor %}", "012"),
        ("{{ dict(a=1) }} {{ namespace(x=2).x }}", "{'a': 1} 2"),
    ],
)
def test_ordinary_templates_render_as_in_jinja(template, expected):
    assert ENV.from_string(template).render() == expected


def test_a_refused_prompt_template_is_an_input_error_naming_the_parameter():
    from autorater_pipelines.errors import InputError
    from autorater_pipelines.pairwise.prompt_parameters import compile_prompt_parameters

    compiled = compile_prompt_parameters(
        {"inference_instruction": {"template": "{{ q }} {{ lipsum(n=1000000, min=20, max=100)|length }}"}},
        available_columns=["q"],
        source_name="autorater_prompt_parameters",
    )
    with pytest.raises(
        InputError,
        match=r"data\.jsonl line 3: the template of autorater_prompt_parameters\.inference_instruction was refused "
        r"by the sandbox \(lipsum\(n=1000000, max=100\) would produce up to 1412000000 characters",
    ):
        compiled.render({"q": "x"}, location="data.jsonl line 3")
