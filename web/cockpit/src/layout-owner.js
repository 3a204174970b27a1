// The operator's own layout for the watched robot: the link's (#layout=…) or the saved one applied
// to the manifest, Share (the link) and Reset (the manifest's layout). The custom layout is kept
// per robot in localStorage; a link's layout wins over the saved one and becomes the saved one.
// Editing (layout-editor.js) loads when Edit is first pressed.
import { applyCustom, decodeShared, encodeShared, loadSaved, save } from './layout-link.js';

export class LayoutOwner {
  editing = false;
  #linked = null; // the custom layout from the link, until applied
  current = null; // {robotId, manifest, custom}
  #note = '';
  /** @type {import('./layout-editor.js').LayoutEditor | undefined} loaded on the first Edit */
  editor;

  /** @param {{validate: (m: object) => object, kindOf: (e: string) => string, rerender: () => void}} o */
  constructor({ validate, kindOf, rerender }) {
    this.validate = validate;
    this.kindOf = kindOf;
    this.rerender = rerender;
    const m = location.hash.match(/(?:^#|&)layout=([^&]*)/);
    if (m) {
      const r = decodeShared(m[1]);
      if (r.ok === false) this.#note = r.error;
      else this.#linked = r.custom;
    }
  }

  get note() {
    return this.#note;
  }

  /** The manifest to show for `robotId`: the custom layout applied, or the manifest's own. */
  effective(manifest, robotId) {
    if (this.#linked) {
      save(robotId, this.#linked);
      this.#linked = null;
    }
    const custom = loadSaved(robotId);
    this.current = { robotId, manifest, custom };
    if (!custom) return manifest;
    const r = applyCustom(manifest, custom, this.validate);
    if (r.ok) return r.manifest;
    this.#note = `your saved layout no longer fits this robot (${r.error}); showing its own layout`;
    return manifest;
  }

  /** The layout being edited: the saved one, or the manifest's. */
  custom() {
    const { manifest, custom } = this.current;
    return custom ?? { layout: manifest.layout, added: [] };
  }

  /** Saves an edited layout for this robot and shows it. */
  commit(custom) {
    save(this.current.robotId, custom);
    this.#note = '';
    this.rerender();
  }

  reset() {
    this.commit(null);
  }

  /** The link that opens this layout for anyone. */
  shareUrl() {
    const url = new URL(location.href);
    url.hash = `layout=${encodeShared(this.custom())}`;
    return url.href;
  }

  /** Loads the editor; the edit controls below exist once it has. */
  async startEditing() {
    if (!this.editor) {
      const { LayoutEditor } = await import('./layout-editor.js');
      this.editor ??= new LayoutEditor(this);
    }
    this.editing = true;
  }

  decorate(el, id) {
    this.editor?.decorate(el, id);
  }

  resizer(...args) {
    return this.editor.resizer(...args);
  }

  add(channel) {
    this.editor?.add(channel);
  }
}
