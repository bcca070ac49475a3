package longtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Test is one long test: its package directory relative to the root
// Find was given ("./server") and its name.
type Test struct {
	Dir, Name string
}

// Find lists the top-level test functions under root whose body calls
// longtest.Require or longtest.Enabled (a test that runs smaller in the
// main run and in full in the long step), skipping node_modules, testdata and hidden
// directories, sorted by directory and name.
func Find(root string) ([]Test, error) {
	var out []Test
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		names, err := longTestsIn(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir := "./" + filepath.ToSlash(rel)
		if rel == "." {
			dir = "."
		}
		for _, n := range names {
			out = append(out, Test{Dir: dir, Name: n})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding long tests under %s: %w", root, err)
	}
	slices.SortFunc(out, func(a, b Test) int {
		if c := strings.Compare(a.Dir, b.Dir); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// longTestsIn returns the Test functions of one file that call
// <name>.Require or <name>.Enabled, where <name> is how the file imports this package.
func longTestsIn(path string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := ""
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == importPath {
			local = "longtest"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil, nil
	}
	var names []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return !found
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Require" || sel.Sel.Name == "Enabled") {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					found = true
				}
			}
			return !found
		})
		if found {
			names = append(names, fn.Name.Name)
		}
	}
	return names, nil
}

// importPath is this package's import path.
const importPath = "github.com/dsh-refls/dsh-refls/internal/longtest"

// RunPattern is a go test -run pattern matching exactly the named tests
// (and their subtests).
func RunPattern(tests []Test) string {
	var names []string
	for _, t := range tests {
		names = append(names, regexp.QuoteMeta(t.Name))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return "^(" + strings.Join(names, "|") + ")$"
}

// Packages lists the directories of tests once each, in order.
func Packages(tests []Test) []string {
	var dirs []string
	for _, t := range tests {
		if len(dirs) == 0 || dirs[len(dirs)-1] != t.Dir {
			dirs = append(dirs, t.Dir)
		}
	}
	return dirs
}
