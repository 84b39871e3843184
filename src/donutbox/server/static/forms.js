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

// An agent as a choice: its catalogue label ("Easy", "Random").
export function agentLabel(a) {
  return a.label || a.name;
}

// The opponents a player chooses from, as [group label, agents]: the
// difficulty levels, easiest first, then the research agents that no level
// plays exactly.  A plain agent that a level is (the catalogue's `same_as`:
// greedy is Easy) is offered once, as the level; its name still works in
// records, the API and the command line.
export function agentGroups() {
  const all = agents();
  const levels = all.filter((a) => a.level).sort((a, b) => a.level - b.level);
  const research = all.filter((a) => !a.level && !a.same_as);
  return [["Computer levels", levels], ["Research agents", research]];
}

// The level a remembered or linked agent name is offered as (greedy ->
// easy), or the name itself.
export function offeredAs(name) {
  const a = agent(name);
  return a && a.same_as ? a.same_as : name;
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

// Fill a <select> with the agents in their groups (agentGroups), `before`
// ([value, label, help] options) first and `extra` ([group label, options])
// after the levels, and keep `help` showing the chosen one's line.
export function agentSelect(select, help, { before = [], extra = [], chosen } = {}) {
  select.replaceChildren();
  const [levels, research] = agentGroups().map(([label, list]) => [label, list.map((a) => [a.name, agentLabel(a), a.help])]);
  const groups = [levels, ...extra, research].filter(([, list]) => list.length);
  const all = [...before, ...groups.flatMap(([, list]) => list)];
  const option = ([value, text]) => {
    const o = h("option", { value }, text);
    o.selected = value === chosen;
    return o;
  };
  select.append(...before.map(option));
  for (const [label, list] of groups) {
    const group = h("optgroup", { label });
    group.append(...list.map(option));
    select.append(group);
  }
  const say = () => {
    const found = all.find(([value]) => value === select.value);
    if (help) help.textContent = found ? found[2] || "" : "";
  };
  select.addEventListener("change", say);
  say();
}

// The rules a form would send, in words for its "Rules: ... change"
// disclosure: "Standard" when every option is at its default (and no custom
// deck), else the options chosen ("Perfect Match, Splitzkies").
export function rulesInWords(form) {
  const options = (store.meta && Array.isArray(store.meta.rules)) ? store.meta.rules : [];
  const chosen = ruleValues(form);
  const parts = [];
  for (const o of options) {
    const value = chosen[o.name];
    if (value === undefined || value === o.default) continue;
    if (o.kind === "flag") parts.push(value ? o.label : `no ${o.label}`);
    else {
      const c = o.choices.find((x) => x.value === value);
      parts.push(c ? c.label : String(value));
    }
  }
  const deck = form.elements.namedItem("deck");
  if (deck && deck.value.trim()) parts.push("custom deck");
  return parts.length ? parts.join(", ") : "Standard";
}

// Keep a form's rules disclosure saying its current choice.
export function sayRules(form) {
  const now = form.querySelector(".rules-choice .now");
  if (!now) return;
  const say = () => { now.textContent = rulesInWords(form); };
  form.addEventListener("change", say);
  form.addEventListener("input", say);
  say();
  return say;
}
