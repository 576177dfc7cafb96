// DOM helpers that only ever set text through textContent, so trace strings can never become markup.

type Attributes = Readonly<Record<string, string>>;

/** Creates an element with attributes and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return element;
}

/** A definition list of label/value pairs, for span details and range statistics. */
export function factList(facts: readonly (readonly [string, string | Node])[]): HTMLDListElement {
  const list = el('dl', { class: 'facts' });
  for (const [label, value] of facts) list.append(el('dt', {}, label), el('dd', {}, value));
  return list;
}

export function clear(element: Element): void {
  element.replaceChildren();
}
