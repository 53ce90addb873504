package cloudtest

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/hfload/hfload/internal/storage/servertest"
)

// AzuriteInstallHint says how to install the Azure Storage emulator.
const AzuriteInstallHint = "install Azurite with `npm install -g azurite@3.37.0` (Node.js 20 or newer) so that azurite-blob is on PATH " +
	"(or set HFLOAD_AZURITE to the azurite-blob script)"

// Azurite is a running Azurite blob service with a private account and a random key, reached by
// the standard AZURE_STORAGE_CONNECTION_STRING.
type Azurite struct {
	servertest.Process
	Dir     string
	Account string
	Key     string // base64 account key
}

// StartAzurite starts azurite-blob on a free loopback port, its data under dir (telemetry off).
func StartAzurite(dir string) (*Azurite, error) {
	bin, err := servertest.Find("azurite-blob", "HFLOAD_AZURITE")
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, AzuriteInstallHint)
	}
	a := &Azurite{Dir: dir, Account: "hfload" + servertest.RandHex(4), Key: base64.StdEncoding.EncodeToString([]byte(servertest.RandHex(32)))}
	a.Process = servertest.Process{Name: "azurite", Bin: bin, LogPath: filepath.Join(dir, ".azurite.log"),
		Env: []string{"AZURITE_ACCOUNTS=" + a.Account + ":" + a.Key},
		Args: func(addr string) []string {
			host, port, _ := strings.Cut(addr, ":")
			return []string{"--blobHost", host, "--blobPort", port, "--location", filepath.Join(dir, "data"),
				"--silent", "--skipApiVersionCheck", "--loose", "--disableTelemetry", "--disableProductStyleUrl"}
		}}
	return a, a.Start()
}

// ConnectionString is the account's connection string (holds the key: never print it).
func (a *Azurite) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + a.Account + ";AccountKey=" + a.Key +
		";BlobEndpoint=http://" + a.Addr() + "/" + a.Account + ";"
}

// Env is the environment a client needs to reach the emulator, isolated from the user's own Azure
// settings.
func (a *Azurite) Env() []string {
	return []string{
		"AZURE_STORAGE_CONNECTION_STRING=" + a.ConnectionString(),
		"AZURE_STORAGE_ACCOUNT=",
		"AZURE_STORAGE_KEY=",
		"AZURE_STORAGE_SAS_TOKEN=",
	}
}

// Setenv sets Env for the rest of the test.
func (a *Azurite) Setenv(t interface{ Setenv(k, v string) }) { setenv(t, a.Env()) }

// NewBucket creates a container with a fresh name.
func (a *Azurite) NewBucket() (string, error) {
	name := "c" + servertest.RandHex(6)
	c, err := container.NewClientFromConnectionString(a.ConnectionString(), name, nil)
	if err != nil {
		return "", err
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		return "", fmt.Errorf("create container %s: %w", name, err)
	}
	return name, nil
}
