// Package archtest holds no code, only tests of the module's structure: that imports point one way,
// from the commands down to the HBase cell model (see TestImportsPointOneWay and docs/design.md).
package archtest
