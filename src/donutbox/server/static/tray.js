// The player's tray (their cards) and the action buttons under it.

import { $, NAMES, button, h, rotate } from "./dom.js";
import { store, curtained, myTurn, set, setQuietly } from "./store.js";
import { cardSvg, faceWords, spotlight } from "./board.js";
import { boxWords } from "./places.js";
import { allowed, tutorialOn } from "./tutorial.js";

export function drawTray(redrawBoard) {
  const s = store.state;
  const tray = $("#tray");
  tray.replaceChildren();
  // The tutorial: the tutor's tray is not yours to see.
  tray.hidden = s.player < 0 || s.finished || curtained() || Boolean(store.replay) || (tutorialOn() && s.to_move !== 0);
  if (tray.hidden) return;
  s.tray.forEach((face, i) => {
    const b = h("button", { type: "button", className: "card", role: "option", "aria-selected": i === store.selected ? "true" : "false", "aria-label": `tray card ${i + 1}: ${faceWords(i === store.selected ? rotate(face, store.rotation) : face)}` });
    b.append(cardSvg(face, i === store.selected ? store.rotation : 0));
    b.addEventListener("click", () => set({ selected: i }));
    b.draggable = true;
    b.addEventListener("dragstart", (e) => {
      // Only the board is redrawn: a redrawn tray would end the drag.
      if (store.selected !== i) { setQuietly({ selected: i }); redrawBoard(); }
      e.dataTransfer.setData("text/plain", face);
    });
    tray.append(b);
  });
}

// Whether Undo has something to take back: in hotseat the last move; against
// the AI the last move a human made (the AI's answers after it go too).
export function canUndo(s) {
  if (store.online || s.finished || s.mode === "online") return false;
  const n = s.players.length;
  if (s.mode === "hotseat") return s.history.length > 0;
  return s.history.some((_, ply) => s.seats[ply % n] === "human");
}

// Whether the viewer (in hotseat: whoever holds the device) is to move.
function myTurnHere(s) {
  return s.mode === "hotseat" ? !s.finished && s.to_move !== null : myTurn(s);
}

// The lock choice of a Cinnamon Roll placed with `moves` (one per flavour).
export function lockButtons(extra, moves, play) {
  extra.append(document.createTextNode("Lock the Cinnamon Roll to: "));
  for (const m of moves) {
    const f = m.split("=")[1];
    extra.append(button(`${f} · ${NAMES[f]}`, () => play(m), { "aria-label": `lock to ${NAMES[f]}`, title: NAMES[f], className: "lock", "data-lock": f }));
  }
}

// `send(move)` plays a move.
export function drawActions(send) {
  const s = store.state;
  const boxes = $("#boxes");
  boxes.replaceChildren();
  const extra = $("#extra");
  extra.replaceChildren();
  const cover = curtained();
  const playing = !s.finished && !store.replay;
  // Covered (hotseat, between players): no box or swap buttons either, as
  // they tell what the hidden tray can do; undo stays for the last mover.
  for (const m of cover || !playing ? [] : allowed(s) || s.legal) {
    if (m.startsWith("box@")) {
      const box = s.boxes.find((b) => `box@${b.x},${b.y}` === m);
      // Where it is, in words (two boxes may be worth the same) and on the
      // counter while the button is pointed at or focused.
      const b = button(`Box it: ${box ? boxWords(s, box) : m}`, () => send(m));
      const point = (on) => {
        if (box) spotlight(on ? box.cells : null, "#ff6a00");
        document.querySelectorAll(`#board rect.run[data-box="${m.slice(4)}"]`).forEach((r) => r.classList.toggle("pointed", on));
      };
      for (const [type, on] of [["mouseenter", true], ["focus", true], ["mouseleave", false], ["blur", false]]) b.addEventListener(type, () => point(on));
      boxes.append(b);
    } else if (m.startsWith("swap") || m === "pass") {
      extra.append(button(m === "pass" ? "Pass" : `Swap ${m.slice(5)}`, () => send(m)));
    }
  }
  const lock = store.pendingLock;
  if (lock && playing && !cover && lock.id === s.id && lock.version === s.version) lockButtons(extra, lock.moves, send);
  // Placing a card draws; drawing the last card of the pile starts the
  // Final Lap (RULES.md section 8): said before the move, not after.
  const me = s.mode === "hotseat" ? s.to_move : s.player;
  const lastDraw = playing && !cover && myTurnHere(s) && s.final_lap_turns === null && s.pile_sizes[me] === 1;
  $("#lap-warning").hidden = !lastDraw;
  $("#lap-warning").textContent = lastDraw ? `Placing a card now draws the last card of your pile: that starts the Final Lap, and every other player gets one more turn (Box it draws nothing).` : "";
  $("#btn-rotate").hidden = s.player < 0 || cover || !playing;
  $("#btn-undo").hidden = !playing || !canUndo(s) || tutorialOn();
  // Hints are for local games: online, the opponent has not agreed to them.
  $("#btn-hint").hidden = Boolean(store.online) || tutorialOn() || !playing || !myTurn(s) || s.thinking || !s.legal.length || cover;
  $("#btn-export").hidden = !s.finished;
  // (a game aborted before its first move has nothing to replay)
  $("#btn-replay").hidden = !s.finished || !s.history.length;
}
