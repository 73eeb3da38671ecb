#Requires -Version 5.1
<#
.SYNOPSIS
Pester 5 tests of install.ps1, install.cmd and uninstall.ps1 for the windows-latest job
(.github/workflows/windows.yml). Run under Windows PowerShell 5.1:

    Invoke-Pester -Path installer/tests -Output Detailed

.DESCRIPTION
A stub readingroom.exe, compiled here from a few lines of C#, stands in for the real one: it
appends its arguments (joined by " | ") to the file named by RR_STUB_LOG and exits with the
code in RR_STUB_EXIT. So these tests check what the scripts do around setup - the date gate,
-WhatIf, copying, updating, the arguments handed over, exit codes - and not what setup does
(pytest covers that, and the workflow's end-to-end step runs the real bundle).

Every script runs in a child powershell.exe -NonInteractive -File, as install.cmd starts it,
with USERPROFILE, APPDATA and LOCALAPPDATA pointed at a scratch folder under %TEMP%, so nothing
reaches the real profile.
#>

BeforeAll {
    $script:InstallerDir = Split-Path -Path $PSScriptRoot -Parent
    $script:InstallScript = Join-Path -Path $script:InstallerDir -ChildPath 'install.ps1'
    $script:UninstallScript = Join-Path -Path $script:InstallerDir -ChildPath 'uninstall.ps1'
    $script:InstallCmd = Join-Path -Path $script:InstallerDir -ChildPath 'install.cmd'
    $script:PowerShellExe = (Get-Process -Id $PID).Path
    $script:Invariant = [Globalization.CultureInfo]::InvariantCulture
    $script:FormUrl = 'https://form2.ndl.go.jp/form/pub/ndl07/api'
    # Our own scratch folder (TestDrive is per Describe; these helpers serve every block).
    $script:Root = Join-Path -Path ([IO.Path]::GetTempPath()) -ChildPath ('rr-pester-' + [guid]::NewGuid().ToString('N').Substring(0, 8))
    New-Item -ItemType Directory -Path $script:Root -Force | Out-Null

    $script:SavedEnv = @{}
    foreach ($name in @('USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'RR_STUB_LOG', 'RR_STUB_EXIT',
            'READINGROOM_NO_PAUSE')) {
        $script:SavedEnv[$name] = [Environment]::GetEnvironmentVariable($name)
    }
    $script:FakeProfile = Join-Path -Path $script:Root -ChildPath 'profile'
    $env:USERPROFILE = $script:FakeProfile
    $env:APPDATA = Join-Path -Path $script:FakeProfile -ChildPath 'AppData\Roaming'
    $env:LOCALAPPDATA = Join-Path -Path $script:FakeProfile -ChildPath 'AppData\Local'
    $env:READINGROOM_NO_PAUSE = '1'
    foreach ($folder in @($env:APPDATA, $env:LOCALAPPDATA)) {
        New-Item -ItemType Directory -Path $folder -Force | Out-Null
    }

    $script:StubExe = Join-Path -Path $script:Root -ChildPath 'stub.exe'
    $stubSource = @'
using System;
using System.IO;

public static class ReadingRoomStub
{
    public static int Main(string[] args)
    {
        string log = Environment.GetEnvironmentVariable("RR_STUB_LOG");
        if (!String.IsNullOrEmpty(log))
        {
            File.AppendAllText(log, String.Join(" | ", args) + Environment.NewLine);
        }
        int code;
        if (!Int32.TryParse(Environment.GetEnvironmentVariable("RR_STUB_EXIT"), out code))
        {
            code = 0;
        }
        return code;
    }
}
'@
    if ($PSVersionTable.PSEdition -eq 'Desktop') {
        Add-Type -TypeDefinition $stubSource -Language CSharp -OutputAssembly $script:StubExe -OutputType ConsoleApplication
    }
    else {
        # PowerShell 7's Add-Type cannot write an .exe; the .NET Framework compiler can.
        $csc = Join-Path -Path $env:WINDIR -ChildPath 'Microsoft.NET\Framework64\v4.0.30319\csc.exe'
        $stubFile = Join-Path -Path $script:Root -ChildPath 'stub.cs'
        [IO.File]::WriteAllText($stubFile, $stubSource)
        & $csc /nologo "/out:$($script:StubExe)" $stubFile | Out-Null
    }

    function Get-PastDate {
        param([int]$DaysAgo = 30)
        return (Get-Date).AddDays(-$DaysAgo).ToString('yyyy-MM-dd', $script:Invariant)
    }

    function New-Bundle {
        # A bundle folder like dist\readingroom: the stub as both executables, and _internal.
        param([string]$Path, [string]$Marker = 'v1')
        $internal = Join-Path -Path $Path -ChildPath '_internal'
        New-Item -ItemType Directory -Path $internal -Force | Out-Null
        Copy-Item -LiteralPath $script:StubExe -Destination (Join-Path -Path $Path -ChildPath 'readingroom.exe')
        Copy-Item -LiteralPath $script:StubExe -Destination (Join-Path -Path $Path -ChildPath 'ndl-mcp.exe')
        [IO.File]::WriteAllText((Join-Path -Path $internal -ChildPath "$Marker.txt"), $Marker)
        return $Path
    }

    function New-TestCase {
        # Fresh folders for one test: a bundle, an install folder, a data folder and a stub log.
        $base = Join-Path -Path $script:Root -ChildPath ([guid]::NewGuid().ToString('N').Substring(0, 8))
        New-Item -ItemType Directory -Path $base -Force | Out-Null
        return [pscustomobject]@{
            Base    = $base
            Bundle  = New-Bundle -Path (Join-Path -Path $base -ChildPath 'bundle')
            Install = Join-Path -Path $base -ChildPath 'install'
            Data    = Join-Path -Path $base -ChildPath 'data'
            Log     = Join-Path -Path $base -ChildPath 'stub.log'
        }
    }

    function Invoke-Script {
        # Run a script in a child Windows PowerShell, as install.cmd does; exit code and output.
        param([string]$ScriptPath, [string[]]$Arguments, [string]$Log, [int]$StubExit = 0)
        $env:RR_STUB_LOG = $Log
        $env:RR_STUB_EXIT = [string]$StubExit
        $previous = $ErrorActionPreference
        $ErrorActionPreference = 'Continue'
        try {
            $output = & $script:PowerShellExe -NoProfile -NonInteractive -ExecutionPolicy Bypass -File $ScriptPath @Arguments 2>&1 | Out-String
            $code = $LASTEXITCODE
        }
        finally {
            $ErrorActionPreference = $previous
        }
        return [pscustomobject]@{ ExitCode = $code; Output = $output }
    }

    function Invoke-Install {
        param($Case, [string[]]$Extra = @(), [int]$StubExit = 0)
        $arguments = @('-BundleDir', $Case.Bundle, '-InstallDir', $Case.Install, '-DataDir', $Case.Data) + $Extra
        return Invoke-Script -ScriptPath $script:InstallScript -Arguments $arguments -Log $Case.Log -StubExit $StubExit
    }

    function Get-StubCall {
        # One string per stub invocation: its arguments joined by " | ".
        param([string]$Log)
        if (-not (Test-Path -LiteralPath $Log)) {
            return @()
        }
        return @(Get-Content -LiteralPath $Log | Where-Object { $_ -ne '' })
    }

    function Get-TreeSnapshot {
        # Every file under $Path with its size, hash and time, and every folder, sorted;
        # PowerShell's own caches under AppData\*\Microsoft are left out.
        param([string]$Path)
        if (-not (Test-Path -LiteralPath $Path)) {
            return '<absent>'
        }
        $lines = Get-ChildItem -LiteralPath $Path -Recurse -Force | Sort-Object -Property FullName | ForEach-Object {
            $relative = $_.FullName.Substring($Path.Length)
            if ($relative -match '^\\AppData\\(Local|Roaming)\\Microsoft(\\|$)') {
                # PowerShell's own caches (the child powershell.exe writes them), not ours.
                return
            }
            if ($_.PSIsContainer) {
                "$relative\"
            }
            else {
                $hash = (Get-FileHash -LiteralPath $_.FullName -Algorithm SHA256).Hash
                "$relative $($_.Length) $hash $($_.LastWriteTimeUtc.Ticks)"
            }
        }
        return (@($lines) -join "`n")
    }
}

AfterAll {
    foreach ($name in $script:SavedEnv.Keys) {
        [Environment]::SetEnvironmentVariable($name, $script:SavedEnv[$name])
    }
    Remove-Item -LiteralPath $script:Root -Recurse -Force -ErrorAction SilentlyContinue
}

Describe 'install.ps1 -WhatIf' {
    It 'copies nothing, starts no setup and leaves the profile untouched' {
        $case = New-TestCase
        $before = Get-TreeSnapshot -Path $script:FakeProfile
        $result = Invoke-Install -Case $case -Extra @('-WhatIf', '-NotificationFiled', (Get-PastDate))
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match 'What if'
        $result.Output | Should -Match 'no dry run'
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        Test-Path -LiteralPath $case.Data | Should -BeFalse
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
        Get-TreeSnapshot -Path $script:FakeProfile | Should -Be $before
    }

    It 'leaves an existing installation exactly as it was' {
        $case = New-TestCase
        (Invoke-Install -Case $case -Extra @('-NotificationFiled', (Get-PastDate))).ExitCode | Should -Be 0
        Remove-Item -LiteralPath $case.Log
        $before = Get-TreeSnapshot -Path $case.Install
        $newer = New-Bundle -Path (Join-Path -Path $case.Base -ChildPath 'bundle2') -Marker 'v2'
        $arguments = @('-WhatIf', '-BundleDir', $newer, '-InstallDir', $case.Install, '-DataDir', $case.Data)
        $result = Invoke-Script -ScriptPath $script:InstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        Get-TreeSnapshot -Path $case.Install | Should -Be $before
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
    }

    It 'does not prompt for the notification date' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-WhatIf')
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match 'What if: no NDL notification date'
    }
}

Describe 'the NDL notification gate' {
    It 'refuses <Date> before copying anything' -TestCases @(
        @{ Date = '2026-8-19' }
        @{ Date = '19-08-2026' }
        @{ Date = '2026/08/19' }
        @{ Date = '2026-02-30' }
        @{ Date = '2026-13-01' }
        @{ Date = 'yesterday' }
    ) {
        param($Date)
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', $Date)
        $result.ExitCode | Should -Be 2 -Because $result.Output
        $result.Output | Should -Match 'NotificationFiled'
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
    }

    It 'refuses a date in the future' {
        $case = New-TestCase
        $future = (Get-Date).AddDays(2).ToString('yyyy-MM-dd', $script:Invariant)
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', $future)
        $result.ExitCode | Should -Be 2 -Because $result.Output
        $result.Output | Should -Match 'future'
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
    }

    It 'installs and hands a past date to setup' {
        $case = New-TestCase
        $date = Get-PastDate
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', $date)
        $result.ExitCode | Should -Be 0 -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath 'readingroom.exe') | Should -BeTrue
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath '_internal\v1.txt') | Should -BeTrue
        $calls = @(Get-StubCall -Log $case.Log)
        $calls.Count | Should -Be 1
        $calls[0] | Should -Be "setup | --install-dir | $($case.Install) | --notification-filed | $date | --data-dir | $($case.Data)"
    }

    It 'accepts today' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', (Get-PastDate -DaysAgo 0))
        $result.ExitCode | Should -Be 0 -Because $result.Output
    }

    It 'without a date and with no one to ask, runs setup without one and names the form' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match ([regex]::Escape($script:FormUrl))
        $calls = @(Get-StubCall -Log $case.Log)
        $calls.Count | Should -Be 1
        $calls[0] | Should -Be "setup | --install-dir | $($case.Install) | --data-dir | $($case.Data)"
    }

    It 'does not ask again when a date is recorded in the data folder' {
        $case = New-TestCase
        $date = Get-PastDate -DaysAgo 40
        New-Item -ItemType Directory -Path $case.Data -Force | Out-Null
        $record = "NDL Search API notification`ndate filed: $date`ndate recorded: $date`n"
        [IO.File]::WriteAllText((Join-Path -Path $case.Data -ChildPath 'NDL-API-NOTIFICATION.txt'), $record)
        $result = Invoke-Install -Case $case
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match "filed $date"
        @(Get-StubCall -Log $case.Log)[0] | Should -Not -Match 'notification-filed'
    }
}

Describe 'what install.ps1 hands to readingroom setup' {
    It 'splits -Hosts given as one comma-separated argument, as install.cmd passes it' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-Hosts', 'codex,Claude-Desktop,codex')
        $result.ExitCode | Should -Be 0 -Because $result.Output
        @(Get-StubCall -Log $case.Log)[0] | Should -Match ([regex]::Escape('| --hosts | codex,claude-desktop |'))
    }

    It 'with no one to ask, stores no secret and says where to get the CiNii application id' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match ([regex]::Escape('readingroom secrets set CINII_APPID'))
        $result.Output | Should -Match ([regex]::Escape('https://support.nii.ac.jp/ja/cinii/api/developer'))
        @(Get-StubCall -Log $case.Log | Where-Object { $_ -match '^secrets' }).Count | Should -Be 0
    }

    It 'passes --no-self-test' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-NoSelfTest')
        $result.ExitCode | Should -Be 0 -Because $result.Output
        @(Get-StubCall -Log $case.Log)[0] | Should -Match '\| --no-self-test$'
    }

    It 'returns setup''s exit code <Code>' -TestCases @(@{ Code = 1 }, @{ Code = 2 }) {
        param($Code)
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', (Get-PastDate)) -StubExit $Code
        $result.ExitCode | Should -Be $Code -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath 'readingroom.exe') | Should -BeTrue
    }

    It 'refuses a malformed host name before copying' {
        $case = New-TestCase
        $result = Invoke-Install -Case $case -Extra @('-Hosts', 'codex;calc')
        $result.ExitCode | Should -Be 2 -Because $result.Output
        Test-Path -LiteralPath $case.Install | Should -BeFalse
    }

    It 'fails clearly when there is no bundle' {
        $case = New-TestCase
        $empty = Join-Path -Path $case.Base -ChildPath 'empty'
        New-Item -ItemType Directory -Path $empty | Out-Null
        $arguments = @('-BundleDir', $empty, '-InstallDir', $case.Install, '-DataDir', $case.Data)
        $result = Invoke-Script -ScriptPath $script:InstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 1 -Because $result.Output
        $result.Output | Should -Match 'readingroom\.exe'
        Test-Path -LiteralPath $case.Install | Should -BeFalse
    }

    It 'refuses a non-empty folder that is not a readingroom install' {
        $case = New-TestCase
        New-Item -ItemType Directory -Path $case.Install | Out-Null
        $foreign = Join-Path -Path $case.Install -ChildPath 'thesis.docx'
        [IO.File]::WriteAllText($foreign, 'mine')
        $result = Invoke-Install -Case $case -Extra @('-NotificationFiled', (Get-PastDate))
        $result.ExitCode | Should -Be 2 -Because $result.Output
        Test-Path -LiteralPath $foreign | Should -BeTrue
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
    }
}

Describe 'updating over an earlier install' {
    It 'replaces the previous files, keeps no stale ones and leaves no staging folders' {
        $case = New-TestCase
        (Invoke-Install -Case $case).ExitCode | Should -Be 0
        $newer = New-Bundle -Path (Join-Path -Path $case.Base -ChildPath 'bundle2') -Marker 'v2'
        $arguments = @('-BundleDir', $newer, '-InstallDir', $case.Install, '-DataDir', $case.Data)
        $result = Invoke-Script -ScriptPath $script:InstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath '_internal\v2.txt') | Should -BeTrue
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath '_internal\v1.txt') | Should -BeFalse
        $staging = @(Get-ChildItem -LiteralPath $case.Base -Directory | Where-Object { $_.Name -like 'install.*' })
        $staging.Count | Should -Be 0
        @(Get-StubCall -Log $case.Log).Count | Should -Be 2
    }

    It 'copies the uninstaller and records the data folder for it' {
        $case = New-TestCase
        (Invoke-Install -Case $case).ExitCode | Should -Be 0
        foreach ($name in @('uninstall.ps1', 'uninstall.cmd')) {
            Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath $name) | Should -BeTrue
        }
        $record = Get-Content -LiteralPath (Join-Path -Path $case.Install -ChildPath 'readingroom-install.txt')
        $record | Should -Contain "data-dir=$($case.Data)"
    }

    It 'keeps using the recorded data folder when -DataDir is not given again' {
        $case = New-TestCase
        (Invoke-Install -Case $case).ExitCode | Should -Be 0
        $arguments = @('-BundleDir', $case.Bundle, '-InstallDir', $case.Install)
        $result = Invoke-Script -ScriptPath $script:InstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        @(Get-StubCall -Log $case.Log)[1] | Should -Match ([regex]::Escape("| --data-dir | $($case.Data)"))
    }
}

Describe 'install.cmd' {
    It 'passes its arguments through and returns install.ps1''s exit code' {
        $case = New-TestCase
        $future = (Get-Date).AddDays(2).ToString('yyyy-MM-dd', $script:Invariant)
        $env:RR_STUB_LOG = $case.Log
        & cmd.exe /d /c $script:InstallCmd -NotificationFiled $future -BundleDir $case.Bundle -InstallDir $case.Install -DataDir $case.Data | Out-Null
        $LASTEXITCODE | Should -Be 2
        Test-Path -LiteralPath $case.Install | Should -BeFalse
    }

    It 'returns 0 after a successful install' {
        $case = New-TestCase
        $env:RR_STUB_LOG = $case.Log
        $env:RR_STUB_EXIT = '0'
        & cmd.exe /d /c $script:InstallCmd -NotificationFiled (Get-PastDate) -Hosts 'codex,claude-code' -BundleDir $case.Bundle -InstallDir $case.Install -DataDir $case.Data | Out-Null
        $LASTEXITCODE | Should -Be 0
        @(Get-StubCall -Log $case.Log)[0] | Should -Match ([regex]::Escape('| --hosts | codex,claude-code |'))
    }
}

Describe 'uninstall.ps1' {
    BeforeEach {
        $case = New-TestCase
        (Invoke-Install -Case $case -Extra @('-NotificationFiled', (Get-PastDate))).ExitCode | Should -Be 0
        New-Item -ItemType Directory -Path $case.Data -Force | Out-Null
        [IO.File]::WriteAllText((Join-Path -Path $case.Data -ChildPath 'NDL-API-NOTIFICATION.txt'), "filed`n")
        [IO.File]::WriteAllText((Join-Path -Path $case.Data -ChildPath 'receipts.jsonl'), "{}`n")
        Remove-Item -LiteralPath $case.Log
    }

    It 'removes the host entries first, then the install folder, and keeps the data folder' {
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments @('-InstallDir', $case.Install) -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $calls = @(Get-StubCall -Log $case.Log)
        $calls.Count | Should -Be 1
        $calls[0] | Should -Be "setup | --remove | --install-dir | $($case.Install)"
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        Test-Path -LiteralPath (Join-Path -Path $case.Data -ChildPath 'receipts.jsonl') | Should -BeTrue
    }

    It '-RemoveData also removes the data folder' {
        $arguments = @('-InstallDir', $case.Install, '-RemoveData')
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        Test-Path -LiteralPath $case.Data | Should -BeFalse
    }

    It '-WhatIf changes nothing' {
        $before = (Get-TreeSnapshot -Path $case.Install) + (Get-TreeSnapshot -Path $case.Data)
        $arguments = @('-InstallDir', $case.Install, '-RemoveData', '-WhatIf')
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        $result.Output | Should -Match 'What if'
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
        (Get-TreeSnapshot -Path $case.Install) + (Get-TreeSnapshot -Path $case.Data) | Should -Be $before
    }

    It 'keeps the install folder when setup --remove fails' {
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments @('-InstallDir', $case.Install) -Log $case.Log -StubExit 1
        $result.ExitCode | Should -Be 1 -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath 'readingroom.exe') | Should -BeTrue
    }

    It 'runs from the copy in the install folder and removes that folder' {
        $copy = Join-Path -Path $case.Install -ChildPath 'uninstall.ps1'
        $result = Invoke-Script -ScriptPath $copy -Arguments @() -Log $case.Log
        $result.ExitCode | Should -Be 0 -Because $result.Output
        Test-Path -LiteralPath $case.Install | Should -BeFalse
        Test-Path -LiteralPath $case.Data | Should -BeTrue
    }

    It 'refuses to delete a data folder that is not readingroom''s, before changing anything' {
        $other = Join-Path -Path $case.Base -ChildPath 'papers'
        New-Item -ItemType Directory -Path $other | Out-Null
        [IO.File]::WriteAllText((Join-Path -Path $other -ChildPath 'draft.txt'), 'mine')
        $arguments = @('-InstallDir', $case.Install, '-DataDir', $other, '-RemoveData')
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments $arguments -Log $case.Log
        $result.ExitCode | Should -Be 2 -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $other -ChildPath 'draft.txt') | Should -BeTrue
        Test-Path -LiteralPath (Join-Path -Path $case.Install -ChildPath 'readingroom.exe') | Should -BeTrue
        @(Get-StubCall -Log $case.Log).Count | Should -Be 0
    }

    It 'refuses a folder that is not a readingroom install' {
        $other = Join-Path -Path $case.Base -ChildPath 'other'
        New-Item -ItemType Directory -Path $other | Out-Null
        [IO.File]::WriteAllText((Join-Path -Path $other -ChildPath 'keep.txt'), 'mine')
        $result = Invoke-Script -ScriptPath $script:UninstallScript -Arguments @('-InstallDir', $other) -Log $case.Log
        $result.ExitCode | Should -Be 2 -Because $result.Output
        Test-Path -LiteralPath (Join-Path -Path $other -ChildPath 'keep.txt') | Should -BeTrue
    }
}
