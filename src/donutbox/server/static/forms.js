// The new-game forms' rule options and opponents, built from /api/meta (the
// rules' one schema and the agent catalogue): each with its one-line help.

import { h } from "./dom.js";
import { store } from "./store.js";

export function agents() {
  return (store.meta && Array.isArray(store.meta.agents)) ? store.meta.agents.filter((a) => a && typeof a === "object") : [];
}

export function agent(name) {
  return agents().find((a) => a.name === name) || null;
}

// An agent as a choice: its catalogue label ("AI: easy", "Random").
export function agentLabel(a) {
  return a.label || a.name;
}

function helpLine(id) {
  return h("span", { className: "help", id });
}

// Fill `into` with one field per rule option, named by the option's name
// (a select for a choice, a checkbox for a flag), each with its help line.
export function ruleFields(into, prefix) {
  into.replaceChildren();
  const options = (store.meta && Array.isArray(store.meta.rules)) ? store.meta.rules : [];
  for (const o of options) {
    const helpId = `${prefix}-${o.name}-help`;
    const label = h("label", { className: "field" });
    if (o.kind === "flag") {
      const box = h("input", { type: "checkbox", name: o.name, "aria-describedby": helpId });
      box.checked = o.default === true;
      label.append(box, document.createTextNode(` ${o.label}`));
      const help = helpLine(helpId);
      help.textContent = o.help;
      into.append(label, help);
      continue;
    }
    const select = h("select", { name: o.name, "aria-describedby": helpId });
    for (const c of o.choices) {
      const opt = h("option", { value: c.value }, c.label);
      opt.selected = c.value === o.default;
      select.append(opt);
    }
    label.append(document.createTextNode(`${o.label} `), select);
    const help = helpLine(helpId);
    const say = () => {
      const c = o.choices.find((x) => x.value === select.value);
      help.textContent = c && c.help ? c.help : o.help;
    };
    select.addEventListener("change", say);
    say();
    into.append(label, help);
  }
}

// The rule options of a form, as the API takes them.
export function ruleValues(form) {
  const out = {};
  const options = (store.meta && Array.isArray(store.meta.rules)) ? store.meta.rules : [];
  for (const o of options) {
    const field = form.elements.namedItem(o.name);
    if (!field) continue;
    out[o.name] = o.kind === "flag" ? field.checked : field.value;
  }
  return out;
}

// Fill a <select> with the agents (and `extra` [value, label, help] first
// or last), and keep `help` showing the chosen one's line.
export function agentSelect(select, help, { before = [], after = [], chosen } = {}) {
  select.replaceChildren();
  const all = [...before, ...agents().map((a) => [a.name, agentLabel(a), a.help]), ...after];
  for (const [value, text] of all) {
    const o = h("option", { value }, text);
    o.selected = value === chosen;
    select.append(o);
  }
  const say = () => {
    const found = all.find(([value]) => value === select.value);
    if (help) help.textContent = found ? found[2] || "" : "";
  };
  select.addEventListener("change", say);
  say();
}
