package osfiles

// Windows only: a plain comment mentioning ocannl directives is fine.
var windowsOnly = 1
