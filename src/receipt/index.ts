/**
 * Receipt rendering: order -> model -> layout (the receipt or a kitchen ticket) -> ESC/POS bytes
 * and text twin.
 */
export * from './charset.js';
export * from './encode.js';
export * from './kitchen-layout.js';
export * from './layout.js';
export * from './model.js';
export * from './options.js';
export * from './profile.js';
export * from './render.js';
export * from './sanitize.js';
export * from './text.js';
export * from './width.js';
