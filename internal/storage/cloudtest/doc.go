// Package cloudtest runs private Cloud Storage and Azure Blob Storage emulators on loopback for tests:
// fsouza/fake-gcs-server (a Go program, `go install`) and Microsoft's Azurite (npm). Real servers
// speaking the services' HTTP APIs, never mocks. A package's TestMain starts them once (Main); each
// test asks for one with Emulators.NeedGCS / NeedAzure, which skip with an install hint where the
// emulator is not installed and fail instead under CI (CI=true or HFLOAD_CI=1).
package cloudtest
