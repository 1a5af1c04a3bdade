;; Gripper: one robot with two single-capacity grippers (left and right)
;; carries balls between rooms.  Every action costs 1.
;; Extra condition: the robot cannot enter a room that is locked.

(define (domain gripper)
  (:requirements :strips :typing :negative-preconditions :action-costs)

  (:types room ball gripper)

  (:predicates
    (at-robby ?r - room)            ; the robot is in room ?r
    (at ?b - ball ?r - room)        ; ball ?b lies in room ?r
    (free ?g - gripper)             ; gripper ?g holds nothing
    (carry ?b - ball ?g - gripper)  ; gripper ?g holds ball ?b
    (locked ?r - room))             ; room ?r cannot be entered

  (:functions (total-cost) - number)

  ;; Move the robot from one room to another (unlocked) room.
  (:action move
    :parameters (?from - room ?to - room)
    :precondition (and (at-robby ?from)
                       (not (locked ?to)))
    :effect (and (at-robby ?to)
                 (not (at-robby ?from))
                 (increase (total-cost) 1)))

  ;; Pick up ball ?b in room ?r with the free gripper ?g.
  (:action pick
    :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (at ?b ?r)
                       (at-robby ?r)
                       (free ?g))
    :effect (and (carry ?b ?g)
                 (not (at ?b ?r))
                 (not (free ?g))
                 (increase (total-cost) 1)))

  ;; Drop ball ?b, held by gripper ?g, in room ?r.
  (:action drop
    :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (carry ?b ?g)
                       (at-robby ?r))
    :effect (and (at ?b ?r)
                 (free ?g)
                 (not (carry ?b ?g))
                 (increase (total-cost) 1))))
