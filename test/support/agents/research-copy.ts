/** An agents module exporting an agent another module defines too (the worker must refuse to start). */
export { research } from './research';
