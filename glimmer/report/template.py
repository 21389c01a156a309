# ruff: noqa: E501 -- HTML markup lines; wrapping them would change the rendered whitespace
"""The HTML report's one template (jinja2, autoescaped), kept in code so the report
is a single self-contained file with no package data to find at run time."""

from __future__ import annotations

from typing import Final

TEMPLATE: Final = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Burn-in report: {{ report.title }}{% for t in report.tags %} [{{ t }}]{% endfor %}</title>
<style>
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 0; padding: 0 1.5rem 2em; color: #111; }
h1 { font-size: 1.5em; margin: .6em 0 .2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #999; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid #888; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #eee; }
.banner { font-size: 1.4em; font-weight: bold; padding: .7em 1.5rem; margin: 0 -1.5rem .6em; border-bottom: 4px solid #000; }
.banner.sim { color: #000; background: repeating-linear-gradient(135deg, #ffd400 0 22px, #fff3a8 22px 44px); }
.banner.silicon { color: #fff; background: #00583d; }
.banner.unknown { color: #000; background: repeating-linear-gradient(135deg, #ddd 0 22px, #fff 22px 44px); }
.flag { font-weight: bold; padding: .4em .8em; margin: .3em 0; border: 3px dashed #000; background: #fff; }
.cell { font-weight: bold; white-space: nowrap; }
.pass { background: #d8ecf7; color: #003b5c; border: 1px solid #0072B2; }
.fail { background: repeating-linear-gradient(45deg, #f6c3a7 0 6px, #fbe3d5 6px 12px); color: #6b1c00; border: 3px solid #D55E00; }
.error { background: radial-gradient(#e7b6d6 25%, transparent 26%) 0 0 / 8px 8px, #f7e6f1; color: #5a0f45; border: 3px dotted #CC79A7; }
.skip, .cancelled { background: #f2f2f2; color: #333; border: 1px dashed #777; }
.running, .unknown { background: #fff; color: #000; border: 2px double #000; }
.absent { color: #777; text-align: center; }
.legend span { margin-right: 1em; padding: .1em .4em; }
.chart { margin: .6em 0 1.4em; }
.caption { font-size: .95em; max-width: 60em; }
code { background: #f4f4f4; padding: 0 .2em; }
details { margin: .2em 0; }
td, th { overflow-wrap: break-word; }
td.deciding, td.detail { overflow-wrap: anywhere; }
.wide { max-width: 100%; overflow-x: auto; }
.chart svg { max-width: 100%; height: auto; }
#needs-action td.deciding div { margin: .1em 0; }
</style>
</head>
<body>
<div class="banner {{ banner_class }}" role="alert">{{ flags[0] }}</div>
<h1>Burn-in report: {{ report.title }}{% for t in report.tags %} <code>{{ t }}</code>{% endfor %}</h1>
{% for line in flags[1:] %}<div class="flag">{{ line }}</div>
{% endfor %}
<section id="needs-action">
<h2>Nodes needing action</h2>
{% if actions %}<table>
<tr><th>node(s)</th><th>test</th><th>verdict</th><th>deciding gate and value</th></tr>
{% for a in actions %}<tr><th>{{ a.nodes }}</th><td>{{ a.test }}</td><td class="cell {{ a.look.css }}" data-action="{{ a.phase }}">{{ a.look.shape }} {{ a.look.word }}</td><td class="deciding">{% for d in a.deciding %}<div>{{ d }}</div>{% endfor %}</td></tr>
{% endfor %}</table>{% else %}<p>None: no result Failed, Errored or is still open.</p>{% endif %}
</section>
<table>
<tr><th>run phase of record</th><td><span class="cell {{ run_look.css }}">{{ run_look.shape }} {{ run_word }}</span></td></tr>
<tr><th>summary</th><td>passed {{ report.summary.passed }}, failed {{ report.summary.failed }}, errored {{ report.summary.errored }}, skipped {{ report.summary.skipped }}</td></tr>
{% if report.uid %}<tr><th>uid</th><td>{{ report.uid }}</td></tr>{% endif %}
{% if report.profile %}<tr><th>profile</th><td>{{ report.profile }}</td></tr>{% endif %}
{% if report.cluster %}<tr><th>cluster</th><td>{{ report.cluster }}</td></tr>{% endif %}
{% if report.started_at %}<tr><th>started</th><td>{{ report.started_at }}</td></tr>{% endif %}
{% if report.finished_at %}<tr><th>finished</th><td>{{ report.finished_at }}</td></tr>{% endif %}
{% if report.cancel_reason is not none %}<tr><th>cancel reason</th><td>{{ report.cancel_reason or "(none given)" }}</td></tr>{% endif %}
<tr><th>provenance</th><td>{{ report.provenance }}{% if report.certifies_silicon %} (certifies silicon){% else %} (certifies nothing){% endif %}</td></tr>
<tr><th>source</th><td>{{ report.source }}{% if report.envelopes %} ({{ report.envelopes }} envelope(s), {{ report.duplicates }} repeated){% endif %}</td></tr>
</table>

<p class="legend">Reading the cells (words and shapes, not only colour):
{% for l in legend %}<span class="cell {{ l.css }}">{{ l.shape }} {{ l.word }}</span>{% endfor %}
<span class="cell absent">{{ not_run }} not run</span></p>

<h2>Verdicts: node x test (failing nodes first)</h2>
{% if grid.nodes %}
<div class="wide"><table class="grid">
<tr><th>node</th>{% for t in grid.tests %}<th>{{ t }}</th>{% endfor %}</tr>
{% for row in grid.rows %}<tr><th>{{ row.node }}</th>{% for c in row.cells %}<td class="cell {{ c.css }}" title="{{ c.title }}"{% if c.phase is not none %} data-verdict="{{ c.phase }}"{% endif %}>{{ c.shape }} {{ c.word }}</td>{% endfor %}</tr>
{% endfor %}</table></div>
{% else %}<p>No Node-scope results.</p>{% endif %}

{% if node_verdicts %}<h2>Node verdicts: what this run established per node</h2>
<table class="grid">
<tr><th>node</th><th>verdict</th><th>why not Passed</th></tr>
{% for v in node_verdicts %}<tr><th>{{ v.node }}</th><td class="cell {{ v.look.css }}" data-node-verdict="{{ v.verdict }}">{{ v.look.shape }} {{ v.look.word }}</td><td>{{ v.reason }}</td></tr>
{% endfor %}</table>{% endif %}

<h2>Links (Pair / Group)</h2>
{% if links %}<table>
<tr><th>test</th><th>scope</th><th>nodes</th><th>verdict</th><th>detail</th></tr>
{% for r in links %}<tr><td>{{ r.name }}</td><td>{{ r.scope }}</td><td>{{ r.nodes }}</td><td class="cell {{ r.look.css }}" data-verdict="{{ r.phase }}">{{ r.look.shape }} {{ r.look.word }}</td><td>{% for d in r.detail %}<div>{{ d }}</div>{% endfor %}</td></tr>
{% endfor %}</table>{% else %}<p>No Pair or Group results.</p>{% endif %}

{% if refusals %}<h2>Run refusals</h2><table>
<tr><th>name</th><th>verdict</th><th>detail</th></tr>
{% for r in refusals %}<tr><td>{{ r.name }}</td><td class="cell {{ r.look.css }}" data-verdict="{{ r.phase }}">{{ r.look.shape }} {{ r.look.word }}</td><td>{% for d in r.detail %}<div>{{ d }}</div>{% endfor %}</td></tr>
{% endfor %}</table>{% endif %}

<h2>Fleet distributions (gated metrics; failing ones first)</h2>
{% if folded %}<div class="caption" id="folded"><b>One value across the fleet (no chart needed):</b>{% for f in folded %}<div>{{ f }}</div>{% endfor %}</div>{% endif %}
{% for d in charts %}<div class="chart">
{% if d.svg %}{{ d.svg | safe }}{% else %}<p><b>{{ d.title }}</b>: no node reported a readable value.</p>{% endif %}
<div class="caption">
{% if d.violators %}<div><b>Violating this gate:</b> {{ d.violators }}</div>{% endif %}
{% if d.declared %}<div><b>Failed (declared by the runner, no gate recorded):</b> {{ d.declared }}</div>{% endif %}
{% if d.outliers %}<div><b>Far from the fleet median:</b> {{ d.outliers }}</div>{% endif %}
{% for b in d.bands %}<div><b>Cohort band:</b> {{ b }}</div>{% endfor %}
{% if d.unreadable %}<div><b>Not a readable number:</b> {{ d.unreadable }}</div>{% endif %}
{% if d.unreported %}<div><b>Not reported by:</b> {{ d.unreported }}</div>{% endif %}
{% if d.unmeasurable %}<div><b>Unmeasurable (n/a) on:</b> {{ d.unmeasurable }}</div>{% endif %}
{% if not d.known %}<div>The threshold value is not in this input, so none is drawn.</div>{% endif %}
</div></div>
{% else %}{% if not folded %}<p>No gated metric is known from this input.</p>{% endif %}{% endfor %}

<h2>Results in detail</h2>
<table>
<tr><th>test</th><th>node(s)</th><th>verdict</th><th>provenance</th><th>message and notes</th><th>metrics</th></tr>
{% for r in details %}<tr><td>{{ r.name }}</td><td>{{ r.nodes }}</td><td class="cell {{ r.look.css }}">{{ r.look.shape }} {{ r.look.word }}</td><td>{{ r.provenance }}</td><td>{% for d in r.detail %}<div>{{ d }}</div>{% endfor %}</td><td>{% if r.metrics %}<details><summary>{{ r.metrics|length }} metric(s)</summary><table>{% for k, v in r.metrics %}<tr><td>{{ k }}</td><td>{{ v }}</td></tr>{% endfor %}</table></details>{% else %}{{ not_run }}{% endif %}</td></tr>
{% endfor %}</table>

{% if report.checkpoints %}<h2>Checkpoints (unjudged mid-run readings)</h2><table>
<tr><th>sequence</th><th>sent</th><th>results read</th></tr>
{% for c in report.checkpoints %}<tr><td>{{ c.sequence }}</td><td>{{ c.sent_at }}</td><td>{{ c.results|length }}</td></tr>{% endfor %}
</table>{% endif %}

{% if identities %}<h2>Node identities (NodeFingerprints)</h2><table>
<tr><th>node</th><th>GPUs</th><th>OS</th><th>kernel</th><th>digest</th><th>drift</th></tr>
{% for i in identities %}<tr><td>{{ i.node }}</td><td>{{ i.gpus|join(", ") }}</td><td>{{ i.os_image }}</td><td>{{ i.kernel }}</td><td>{{ i.digest }}</td><td>{% if i.drifted %}DRIFTED{% else %}stable{% endif %}</td></tr>{% endfor %}
</table>{% endif %}
{% if fingerprint %}<h2>Run-start fingerprint</h2><table>
{% for node, text in fingerprint %}<tr><th>{{ node }}</th><td>{{ text }}</td></tr>{% endfor %}
</table>{% endif %}
</body>
</html>
"""
