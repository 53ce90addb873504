package kv

import (
	"errors"
	"fmt"
	"strings"
)

// This file ports HBase's visibility expression parser and expander
// (hbase-server .../security/visibility/ExpressionParser.java and ExpressionExpander.java, with
// expression/LeafExpressionNode and NonLeafExpressionNode) step for step, so that the clause order,
// and therefore the tag bytes, are the ones HBase produces. The quirks are kept on purpose:
// AND/OR are left-associative with no precedence, a&b|c parses as (a&b)|c.

type visOp int

const (
	visLeaf visOp = iota
	visAnd
	visOr
	visNot
	visOpenParen // the parser's OPEN_PARAN_NODE sentinel
)

type visNode struct {
	op       visOp
	label    string
	children []*visNode
}

// single is ExpressionNode.isSingleNode: leaves (and the paren sentinel) and NOT nodes.
func (n *visNode) single() bool { return n.op == visLeaf || n.op == visOpenParen || n.op == visNot }

func (n *visNode) add(c *visNode) error {
	if n.op == visNot && len(n.children) == 1 {
		return errors.New("NOT takes one operand")
	}
	n.children = append(n.children, c)
	return nil
}

func (n *visNode) clone() *visNode {
	if n.op == visLeaf || n.op == visOpenParen {
		return n // leaves are never mutated
	}
	c := &visNode{op: n.op, children: make([]*visNode, len(n.children))}
	for i, ch := range n.children {
		c.children[i] = ch.clone()
	}
	return c
}

// visValidAuthChar is VisibilityLabelsValidator.isValidAuthChar.
func visValidAuthChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		b == '_' || b == '-' || b == ':' || b == '.' || b == '/'
}

func visEndOfLabel(b byte) bool {
	return b == '(' || b == ')' || b == '|' || b == '&' || b == '!' || b == ' '
}

type visParser struct {
	stack []*visNode
	exp   []byte
}

var errVisParse = errors.New("syntax error")

func (p *visParser) errAt(i int) error { return fmt.Errorf("%w at column %d", errVisParse, i) }

func (p *visParser) push(n *visNode) { p.stack = append(p.stack, n) }
func (p *visParser) pop() *visNode {
	n := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	return n
}
func (p *visParser) peek() *visNode { return p.stack[len(p.stack)-1] }

func (p *visParser) skipSpaces(i int) int {
	for i < len(p.exp)-1 && p.exp[i+1] == ' ' {
		i++
	}
	return i
}

// visParse is ExpressionParser.parse.
func visParse(s string) (*visNode, error) {
	s = strings.TrimSpace(s)
	p := &visParser{exp: []byte(s)}
	end := len(p.exp)
	for i := 0; i < end; i++ {
		var err error
		switch b := p.exp[i]; b {
		case '(':
			err = p.openParen(i)
			i = p.skipSpaces(i)
		case ')':
			err = p.closeParen(i)
			i = p.skipSpaces(i)
		case '&', '|':
			op := visAnd
			if b == '|' {
				op = visOr
			}
			err = p.andOr(op, i)
			i = p.skipSpaces(i)
		case '!':
			err = p.not(i)
		case '"':
			i++
			var lab []byte
			for i < end && p.exp[i] != '"' {
				if p.exp[i] == '\\' {
					i++
					if i >= end || (p.exp[i] != '\\' && p.exp[i] != '"') {
						return nil, fmt.Errorf("invalid escaping within quotes at column %d", i)
					}
				}
				lab = append(lab, p.exp[i])
				i++
			}
			if i == end {
				return nil, fmt.Errorf("no terminating quote at column %d", i)
			}
			leaf := strings.TrimSpace(string(lab))
			if leaf == "" {
				return nil, p.errAt(i)
			}
			err = p.label(&visNode{op: visLeaf, label: leaf}, i)
			i = p.skipSpaces(i)
		default:
			start := i
			for {
				if !visValidAuthChar(p.exp[i]) {
					return nil, fmt.Errorf("invalid label character %q at column %d", p.exp[i], i)
				}
				i++
				if i >= end || visEndOfLabel(p.exp[i]) {
					break
				}
			}
			leaf := strings.TrimSpace(string(p.exp[start:i]))
			if leaf == "" {
				return nil, p.errAt(i)
			}
			err = p.label(&visNode{op: visLeaf, label: leaf}, i)
			i--
			i = p.skipSpaces(i)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.stack) != 1 {
		return nil, errVisParse
	}
	top := p.pop()
	if top.op == visOpenParen {
		return nil, errVisParse
	}
	if top.op == visNot && len(top.children) != 1 || (top.op == visAnd || top.op == visOr) && len(top.children) != 2 {
		return nil, errVisParse
	}
	return top, nil
}

func (p *visParser) closeParen(i int) error {
	if len(p.stack) < 2 {
		return p.errAt(i)
	}
	top := p.pop()
	second := p.pop()
	if top.op == visOpenParen || second.op != visOpenParen {
		return p.errAt(i)
	}
	if top.op == visNot && len(top.children) != 1 || (top.op == visAnd || top.op == visOr) && len(top.children) != 2 {
		return p.errAt(i)
	}
	if len(p.stack) > 0 {
		third := p.peek()
		if third.op != visLeaf && third.op != visOpenParen {
			third = p.pop()
			if err := third.add(top); err != nil {
				return p.errAt(i)
			}
			if third.op == visNot && len(p.stack) > 0 {
				fourth := p.peek()
				if fourth.op == visAnd || fourth.op == visOr {
					if err := fourth.add(third); err != nil {
						return p.errAt(i)
					}
					return nil
				}
			}
			top = third
		}
	}
	p.push(top)
	return nil
}

func (p *visParser) openParen(i int) error {
	if len(p.stack) > 0 {
		top := p.peek()
		switch top.op {
		case visLeaf:
			return p.errAt(i)
		case visNot:
			if len(top.children) != 0 {
				return p.errAt(i)
			}
		case visAnd, visOr:
			if len(top.children) != 1 {
				return p.errAt(i)
			}
		}
	}
	p.push(&visNode{op: visOpenParen})
	return nil
}

func (p *visParser) label(n *visNode, i int) error {
	if len(p.stack) == 0 {
		p.push(n)
		return nil
	}
	top := p.peek()
	switch top.op {
	case visOpenParen:
		p.push(n)
	case visAnd, visOr, visNot:
		top = p.pop()
		if err := top.add(n); err != nil {
			return p.errAt(i)
		}
		if top.op == visNot && len(p.stack) > 0 {
			second := p.peek()
			if second.op == visOpenParen {
				p.push(top)
			} else if second.op != visLeaf {
				if err := second.add(top); err != nil {
					return p.errAt(i)
				}
			} else {
				return p.errAt(i) // HBase silently drops the node here; unreachable for valid input
			}
		} else {
			p.push(top)
		}
	default:
		return p.errAt(i)
	}
	return nil
}

func (p *visParser) andOr(op visOp, i int) error {
	if len(p.stack) == 0 {
		return p.errAt(i)
	}
	top := p.pop()
	if top.single() {
		if top.op == visOpenParen {
			return p.errAt(i)
		}
	} else if len(top.children) != 2 {
		return p.errAt(i)
	}
	p.push(&visNode{op: op, children: []*visNode{top}})
	return nil
}

func (p *visParser) not(i int) error {
	if len(p.stack) > 0 {
		top := p.peek()
		if top.single() && top.op != visOpenParen {
			return p.errAt(i)
		}
		if !top.single() && len(top.children) != 1 {
			return p.errAt(i)
		}
	}
	p.push(&visNode{op: visNot})
	return nil
}

// visExpand is ExpressionExpander.expand.
func visExpand(src *visNode) *visNode {
	if !src.single() {
		n := src
		outer := n.op
		toExpand := false
		for _, c := range n.children {
			if !c.single() {
				toExpand = true
			}
		}
		if toExpand {
			nn := &visNode{op: n.op}
			for _, c := range n.children {
				if c.single() {
					nn.children = append(nn.children, c)
				} else {
					nn.children = append(nn.children, visExpand(c))
				}
			}
			n = visExpandNonLeaf(nn, outer)
		}
		return n
	}
	if src.op == visNot {
		return visNegate(src)
	}
	return src
}

func visNegate(n *visNode) *visNode {
	child := n.children[0]
	if child.op == visLeaf {
		return n
	}
	if child.op == visNot {
		return child.children[0]
	}
	op := visOr
	if child.op == visOr {
		op = visAnd
	}
	nn := &visNode{op: op}
	for _, c := range child.children {
		neg := &visNode{op: visNot, children: []*visNode{c.clone()}}
		nn.children = append(nn.children, visExpand(neg))
	}
	return nn
}

func visExpandNonLeaf(n *visNode, outer visOp) *visNode {
	if len(n.children) != 2 {
		return n // HBase asserts two children; the parser only builds binary nodes
	}
	left, right := n.children[0], n.children[1]
	switch {
	case right.single():
		return visMerge(n, outer, right, left)
	case left.single():
		return visMerge(n, outer, left, right)
	}
	if outer == left.op && outer == right.op {
		c := left.clone()
		c.children = append(c.children, right.children...)
		return c
	}
	if outer == visOr {
		switch {
		case left.op == visOr && right.op == visAnd:
			left.children = append(left.children, right)
			return left
		case left.op == visAnd && right.op == visOr:
			right.children = append(right.children, left)
			return right
		}
		return n
	}
	nn := &visNode{op: visOr}
	switch {
	case left.op == visOr && right.op == visAnd:
		for _, e := range left.children {
			c := right.clone()
			c.children = append(c.children, e)
			nn.children = append(nn.children, c)
		}
	case left.op == visAnd && right.op == visOr:
		for _, e := range right.children {
			c := left.clone()
			c.children = append(c.children, e)
			nn.children = append(nn.children, c)
		}
	default:
		for _, l := range left.children {
			for _, r := range right.children {
				nn.children = append(nn.children, &visNode{op: visAnd, children: []*visNode{l.clone(), r.clone()}})
			}
		}
	}
	return nn
}

// visMerge is ExpressionExpander.mergeChildNodes.
func visMerge(outerNode *visNode, outer visOp, single, nl *visNode) *visNode {
	if nl.op == outer {
		c := nl.clone()
		c.children = append(c.children, single)
		return c
	}
	if outer == visAnd {
		nn := &visNode{op: visOr}
		for _, e := range nl.children {
			nn.children = append(nn.children, &visNode{op: visAnd, children: []*visNode{e, single}})
		}
		return nn
	}
	return outerNode
}

// visClauseBound bounds the number of OR-clauses the expansion of n (pos) and of NOT n (neg) can
// produce, saturating at 1<<30, so that an expression such as (a|b)&(c|d)&... is refused before the
// expansion grows exponentially.
func visClauseBound(n *visNode) (pos, neg int) {
	const limit = 1 << 30
	sat := func(v int) int { return min(v, limit) }
	switch n.op {
	case visNot:
		if len(n.children) == 0 {
			return 1, 1
		}
		p, q := visClauseBound(n.children[0])
		return q, p
	case visAnd, visOr:
		prodP, sumP, prodN, sumN := 1, 0, 1, 0
		for _, c := range n.children {
			p, q := visClauseBound(c)
			prodP, sumP = sat(prodP*p), sat(sumP+p)
			prodN, sumN = sat(prodN*q), sat(sumN+q)
		}
		if n.op == visAnd {
			return prodP, sumN
		}
		return sumP, prodN
	}
	return 1, 1
}
